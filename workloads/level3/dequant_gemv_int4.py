# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A dequantising GEMV over packed int4 weights (symmetric, signed nibbles, one scale per group): the
batch-1 decode kernel of w4a16 inference."""

import torch
import torch.nn as nn

IN = 64
OUT = 32
GROUP = 16

STEPTP = {
    "name": "dequant_gemv_int4",
    "level": 3,
    "tags": ["llm", "gemv", "int4", "quantization", "packed", "decode"],
    "ops": ["and_", "rshift", "stack", "reshape", "to", "sub", "ge", "mul", "view", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"IN": 8192, "OUT": 28672, "GROUP": 128},
    "description": "Signed nibbles v - 16 * (v >= 8) from packed uint8, per-group scale, W @ x.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        nibbles = torch.randint(0, 16, (OUT, IN), dtype=torch.uint8)
        self.packed = nn.Parameter(nibbles[:, 0::2] | (nibbles[:, 1::2] << 4), requires_grad=False)
        self.scale = nn.Parameter(torch.rand(OUT, IN // GROUP, 1) * 0.02 + 0.005, requires_grad=False)

    def forward(self, x):
        v = torch.stack([self.packed & 0xF, self.packed >> 4], dim=-1).reshape(OUT, IN // GROUP, GROUP)
        v = v.to(x.dtype)
        signed = v - 16 * (v >= 8).to(x.dtype)
        weight = (signed * self.scale.to(x.dtype)).view(OUT, IN)
        return weight @ x


def get_inputs():
    return [torch.randn(IN)]


def get_init_inputs():
    return []
