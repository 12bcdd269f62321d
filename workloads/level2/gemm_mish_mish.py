# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM followed by two Mish activations."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_mish_mish",
    "level": 2,
    "tags": ["gemm", "epilogue"],
    "ops": ["linear", "mish"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> Mish -> Mish.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = F.mish(F.mish(y))
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
