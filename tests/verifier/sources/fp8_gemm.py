"""An fp8 GEMM with per-tensor scales (issue 46): fp8 weights, the input quantised to fp8 on the fly,
both dequantised to f32, multiplied, then scaled. ``FORMAT`` picks e4m3fn (0) or e5m2 (1)."""

import torch
import torch.nn as nn

N = 8
IN = 32
OUT = 16
FORMAT = 0

FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)[FORMAT]
FP8_MAX = torch.finfo(FP8).max


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        weight = torch.randn(OUT, IN)
        scale = weight.abs().amax() / FP8_MAX
        self.weight = nn.Parameter((weight / scale).to(FP8), requires_grad=False)
        self.weight_scale = nn.Parameter(scale, requires_grad=False)

    def forward(self, x):
        x_scale = x.abs().amax() / FP8_MAX
        xq = (x / x_scale).to(FP8)
        y = xq.to(torch.float32) @ self.weight.to(torch.float32).t()
        return y * (x_scale * self.weight_scale)


def get_inputs():
    return [torch.randn(N, IN)]


def get_init_inputs():
    return []
