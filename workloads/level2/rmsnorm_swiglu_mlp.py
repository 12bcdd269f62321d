# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""LLaMA feed-forward: RMSNorm, SwiGLU (silu(gate) * up), down projection, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
EMBED = 64
HIDDEN = 96
EPS = 1e-06

STEPTP = {
    "name": "rmsnorm_swiglu_mlp",
    "level": 2,
    "tags": ["normalization", "rms_norm", "gemm", "mlp", "residual"],
    "ops": ["pow", "mean", "rsqrt", "mul", "linear", "silu", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "HIDDEN": 11008},
    "description": "x + down(silu(gate(n)) * up(n)) with n = rmsnorm(x); the projections have no bias.",
}


class Model(nn.Module):
    def __init__(self, embed, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(embed))
        self.eps = eps
        self.gate = nn.Linear(embed, hidden, bias=False)
        self.up = nn.Linear(embed, hidden, bias=False)
        self.down = nn.Linear(hidden, embed, bias=False)

    def forward(self, x):
        n = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
        return x + self.down(F.silu(self.gate(n)) * self.up(n))


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HIDDEN, EPS]
