# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""An fp8 GEMM with per-block scales (DeepSeek-V3): weights e4m3 with one scale per BLOCK x BLOCK tile,
activations quantised per token and per BLOCK-wide group, scales applied to the dequantised operands."""

import torch
import torch.nn as nn

TOKENS = 8
IN = 32
OUT = 16
BLOCK = 8

STEPTP = {
    "name": "fp8_gemm_per_block",
    "level": 3,
    "tags": ["llm", "gemm", "fp8", "quantization", "block_scale"],
    "ops": ["view", "abs", "amax", "clamp", "truediv", "to", "mul", "matmul", "t"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 4096, "IN": 7168, "OUT": 18432, "BLOCK": 128},
    "description": "Per-(token, group) activation scales and per-(BLOCK x BLOCK) weight scales, "
    "e4m3 operands dequantised in f32, then one GEMM.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        weight = torch.randn(OUT // BLOCK, BLOCK, IN // BLOCK, BLOCK)
        scale = weight.abs().amax(dim=(1, 3), keepdim=True) / 448.0
        quantised = (weight / scale).to(torch.float8_e4m3fn).view(OUT, IN)
        self.weight = nn.Parameter(quantised, requires_grad=False)
        self.weight_scale = nn.Parameter(scale.view(OUT // BLOCK, IN // BLOCK), requires_grad=False)

    def forward(self, x):
        groups = x.float().view(TOKENS, IN // BLOCK, BLOCK)  # scales and quantisation in f32
        x_scale = groups.abs().amax(dim=-1, keepdim=True).clamp(min=1e-4) / 448.0
        xq = (groups / x_scale).to(torch.float8_e4m3fn)
        xd = (xq.to(torch.float32) * x_scale).view(TOKENS, IN)
        w = self.weight.to(torch.float32).view(OUT // BLOCK, BLOCK, IN // BLOCK, BLOCK)
        wd = (w * self.weight_scale.view(OUT // BLOCK, 1, IN // BLOCK, 1)).view(OUT, IN)
        return (xd @ wd.t()).to(x.dtype)


def get_inputs():
    return [torch.randn(TOKENS, IN)]


def get_init_inputs():
    return []
