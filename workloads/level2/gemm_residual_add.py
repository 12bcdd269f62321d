# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM plus a scaled residual of its own output."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96
SCALE = 0.25

STEPTP = {
    "name": "gemm_residual_add",
    "level": 2,
    "tags": ["gemm", "epilogue", "residual"],
    "ops": ["linear", "mul", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "y = linear(x); y * SCALE + y: a residual connection around a scaling.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x)
        y = y * self.scale + y
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
