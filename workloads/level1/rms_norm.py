# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""RMS normalisation over the feature axis, written out with elementary ops."""

import torch
import torch.nn as nn

BATCH = 4
SEQ = 16
HIDDEN = 64
EPS = 1e-06

STEPTP = {
    "name": "rms_norm",
    "level": 1,
    "tags": ["normalization", "rms_norm", "parameter"],
    "ops": ["pow", "mean", "rsqrt", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 1024, "HIDDEN": 4096},
    "description": "x * rsqrt(mean(x^2) + eps) * weight, the LLaMA normalisation.",
}


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        scale = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * scale * self.weight


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, EPS]
