# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matmul, scale, residual, clamp, log-sum-exp and a Mish-gated output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_FEATURES = 64
HIDDEN = 128
SCALE = 2.0
CLAMP_MIN = -10.0
CLAMP_MAX = 10.0

STEPTP = {
    "name": "matmul_scale_residual_clamp_logsumexp_mish",
    "level": 2,
    "tags": ["gemm", "epilogue", "reduction", "residual"],
    "ops": ["linear", "mul", "add", "clamp", "logsumexp", "mish"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 8192, "HIDDEN": 8192},
    "description": "Linear -> * SCALE -> x + x -> clamp -> logsumexp(dim=1) -> x * mish(x).",
}


class Model(nn.Module):
    def __init__(self, in_features, hidden, scale, clamp_min, clamp_max):
        super().__init__()
        self.fc = nn.Linear(in_features, hidden)
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        y = self.fc(x) * self.scale
        y = y + y
        y = torch.clamp(y, self.clamp_min, self.clamp_max)
        y = torch.logsumexp(y, dim=1, keepdim=True)
        return y * F.mish(y)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, SCALE, CLAMP_MIN, CLAMP_MAX]
