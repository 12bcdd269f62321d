# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, divide by two, row sum, scale."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96
SCALE = 1.5

STEPTP = {
    "name": "gemm_divide_sum_scale",
    "level": 2,
    "tags": ["gemm", "epilogue", "reduction"],
    "ops": ["linear", "truediv", "sum", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> / 2 -> sum over features (keepdim) -> * SCALE.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x)
        y = torch.sum(y / 2.0, dim=1, keepdim=True) * self.scale
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
