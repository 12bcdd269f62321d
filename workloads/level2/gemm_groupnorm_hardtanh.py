# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, group norm, hardtanh."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_groupnorm_hardtanh",
    "level": 2,
    "tags": ["gemm", "epilogue", "normalization", "group_norm"],
    "ops": ["linear", "group_norm", "hardtanh"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> GroupNorm(8 groups) -> Hardtanh(-2, 2).",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(8, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = F.hardtanh(self.norm(y), min_val=-2.0, max_val=2.0)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
