# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, clamp from above by a constant, subtract it."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96
CONSTANT = 0.5

STEPTP = {
    "name": "gemm_min_subtract",
    "level": 2,
    "tags": ["gemm", "epilogue"],
    "ops": ["linear", "clamp_max", "sub"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> min(y, CONSTANT) via clamp_max -> - CONSTANT.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, constant):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.constant = constant

    def forward(self, x):
        y = self.fc(x)
        y = torch.clamp_max(y, self.constant)
        y = y - self.constant
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, CONSTANT]
