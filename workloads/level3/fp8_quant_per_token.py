# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Dynamic per-token fp8 quantisation of activations (vLLM's dynamic_per_token_scaled_fp8_quant):
one scale per row, amax / 448, the row divided and rounded to e4m3; returns the fp8 tensor and scales."""

import torch
import torch.nn as nn

TOKENS = 8
HIDDEN = 64

STEPTP = {
    "name": "fp8_quant_per_token",
    "level": 3,
    "tags": ["llm", "fp8", "quantization", "reduction"],
    "ops": ["abs", "amax", "clamp", "truediv", "to"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 8192, "HIDDEN": 8192},
    "description": "scale = max(amax|x_row|, 1e-6) / 448; q = (x / scale) to e4m3; returns (q, scale).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.float()  # f32 scales whatever the activation dtype, as the serving kernels keep them
        scale = x.abs().amax(dim=-1, keepdim=True).clamp(min=1e-6) / 448.0
        return (x / scale).to(torch.float8_e4m3fn), scale


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return []
