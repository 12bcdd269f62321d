# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, max over features, subtract the mean, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_max_subtract_gelu",
    "level": 2,
    "tags": ["gemm", "epilogue", "reduction"],
    "ops": ["linear", "max", "mean", "sub", "gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> max(dim=1) -> minus its batch mean -> GELU.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = torch.max(y, dim=1, keepdim=True).values
        y = y - y.mean(dim=0, keepdim=True)
        y = F.gelu(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
