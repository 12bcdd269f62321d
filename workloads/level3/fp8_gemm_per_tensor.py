# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""An fp8 (e4m3fn) GEMM with per-tensor scales: weights stored in fp8 with one scale, the activation
quantised to fp8 on the fly with its own dynamic scale, an f32 product, both scales applied after."""

import torch
import torch.nn as nn

TOKENS = 8
IN = 32
OUT = 16

STEPTP = {
    "name": "fp8_gemm_per_tensor",
    "level": 3,
    "tags": ["llm", "gemm", "fp8", "quantization"],
    "ops": ["abs", "amax", "truediv", "to", "matmul", "t", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 4096, "IN": 8192, "OUT": 8192},
    "description": "x_scale = amax|x| / 448; (x / x_scale) to e4m3; fp8 x fp8 product in f32; "
    "* x_scale * w_scale.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        weight = torch.randn(OUT, IN)
        scale = weight.abs().amax() / 448.0
        self.weight = nn.Parameter((weight / scale).to(torch.float8_e4m3fn), requires_grad=False)
        self.weight_scale = nn.Parameter(scale, requires_grad=False)

    def forward(self, x):
        xf = x.float()  # scales and quantisation in f32, as fp8 kernels compute them
        x_scale = xf.abs().amax() / 448.0
        xq = (xf / x_scale).to(torch.float8_e4m3fn)
        y = xq.to(torch.float32) @ self.weight.to(torch.float32).t()
        return (y * (x_scale * self.weight_scale)).to(x.dtype)


def get_inputs():
    return [torch.randn(TOKENS, IN)]


def get_init_inputs():
    return []
