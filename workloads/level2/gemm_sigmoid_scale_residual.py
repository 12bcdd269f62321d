# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, sigmoid, scale, residual add of the GEMM output."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96
SCALE = 2.0

STEPTP = {
    "name": "gemm_sigmoid_scale_residual",
    "level": 2,
    "tags": ["gemm", "epilogue", "residual"],
    "ops": ["linear", "sigmoid", "mul", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> sigmoid * SCALE + linear output.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x)
        y = torch.sigmoid(y) * self.scale + y
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
