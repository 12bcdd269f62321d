# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A w4a16 GEMM (AWQ/GPTQ-style): int4 weights packed two per byte, group-wise scales and zero points
along the input dimension, unpacked with & 0xF / >> 4, dequantised to the activation dtype."""

import torch
import torch.nn as nn

TOKENS = 8
IN = 32
OUT = 16
GROUP = 8

STEPTP = {
    "name": "w4a16_gemm",
    "level": 3,
    "tags": ["llm", "gemm", "int4", "quantization", "packed"],
    "ops": ["and_", "rshift", "stack", "reshape", "to", "sub", "mul", "view", "matmul", "t"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 16, "IN": 8192, "OUT": 28672, "GROUP": 128},
    "description": "Packed uint8 nibbles (low first), per-(row, group) scale and zero point, x @ W^T.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        nibbles = torch.randint(0, 16, (OUT, IN), dtype=torch.uint8)
        self.packed = nn.Parameter(nibbles[:, 0::2] | (nibbles[:, 1::2] << 4), requires_grad=False)
        self.scale = nn.Parameter(torch.rand(OUT, IN // GROUP, 1) * 0.02 + 0.005, requires_grad=False)
        self.zero = nn.Parameter(torch.randint(6, 10, (OUT, IN // GROUP, 1)).float(), requires_grad=False)

    def forward(self, x):
        q = torch.stack([self.packed & 0xF, self.packed >> 4], dim=-1).reshape(OUT, IN // GROUP, GROUP)
        weight = ((q.to(x.dtype) - self.zero.to(x.dtype)) * self.scale.to(x.dtype)).view(OUT, IN)
        return x @ weight.t()


def get_inputs():
    return [torch.randn(TOKENS, IN)]


def get_init_inputs():
    return []
