# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Linear, 1-D average pooling over features, GELU, scale, row max."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 64
OUT_FEATURES = 128
POOL = 4
SCALE = 2.0

STEPTP = {
    "name": "matmul_avgpool_gelu_scale_max",
    "level": 2,
    "tags": ["gemm", "epilogue", "pooling", "reduction"],
    "ops": ["linear", "unsqueeze", "avg_pool1d", "squeeze", "gelu", "mul", "max"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 8192, "OUT_FEATURES": 8192},
    "description": "Linear -> AvgPool1d(POOL) over the feature axis -> GELU -> * SCALE -> max over features.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, pool, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.pool = nn.AvgPool1d(pool)
        self.scale = scale

    def forward(self, x):
        y = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        y = F.gelu(y) * self.scale
        return torch.max(y, dim=1).values


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, POOL, SCALE]
