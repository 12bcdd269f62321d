# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A dequantising GEMV for batch-1 decode: int8 weights with a per-output-channel scale, dequantised on
the fly and multiplied by one activation vector (weight-only int8, e.g. LLM.int8 / W8A16)."""

import torch
import torch.nn as nn

IN = 64
OUT = 32

STEPTP = {
    "name": "dequant_gemv_int8",
    "level": 3,
    "tags": ["llm", "gemv", "int8", "quantization", "decode"],
    "ops": ["to", "mul", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"IN": 8192, "OUT": 28672},
    "description": "y = (W_int8 * scale_row) @ x for one token.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randint(-127, 128, (OUT, IN), dtype=torch.int8), requires_grad=False)
        self.scale = nn.Parameter(torch.rand(OUT, 1) * 0.01 + 0.001, requires_grad=False)

    def forward(self, x):
        # dequantised and accumulated in f32, the result in the activation dtype (as W8A16 GEMVs do)
        return ((self.weight.to(torch.float32) * self.scale.float()) @ x.float()).to(x.dtype)


def get_inputs():
    return [torch.randn(IN)]


def get_init_inputs():
    return []
