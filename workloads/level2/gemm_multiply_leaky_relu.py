# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, multiply by a scalar, leaky ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96
MULTIPLIER = 2.0
NEGATIVE_SLOPE = 0.1

STEPTP = {
    "name": "gemm_multiply_leaky_relu",
    "level": 2,
    "tags": ["gemm", "epilogue"],
    "ops": ["linear", "mul", "leaky_relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> * MULTIPLIER -> LeakyReLU(NEGATIVE_SLOPE).",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = self.fc(x)
        y = F.leaky_relu(y * self.multiplier, negative_slope=self.negative_slope)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, MULTIPLIER, NEGATIVE_SLOPE]
