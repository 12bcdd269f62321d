# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, subtract, multiply, ReLU."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96
SUBTRACT = 0.2
MULTIPLY = 1.5

STEPTP = {
    "name": "gemm_subtract_multiply_relu",
    "level": 2,
    "tags": ["gemm", "epilogue"],
    "ops": ["linear", "sub", "mul", "relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> - SUBTRACT -> * MULTIPLY -> ReLU.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, subtract, multiply):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.subtract = subtract
        self.multiply = multiply

    def forward(self, x):
        y = self.fc(x)
        y = torch.relu((y - self.subtract) * self.multiply)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SUBTRACT, MULTIPLY]
