# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Linear, instance norm over features, residual sum and product."""

import torch
import torch.nn as nn

BATCH = 16
IN_FEATURES = 64
OUT_FEATURES = 64

STEPTP = {
    "name": "gemm_instancenorm_residual_multiply",
    "level": 2,
    "tags": ["gemm", "normalization", "instance_norm", "residual"],
    "ops": ["linear", "unsqueeze", "instance_norm", "squeeze", "add", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 8192, "OUT_FEATURES": 8192},
    "description": "Linear -> InstanceNorm2d over a (B, 1, 1, F) view -> + y -> * y, with y a second input.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.InstanceNorm2d(1)

    def forward(self, x, y):
        h = self.fc(x)
        h = self.norm(h.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        return (h + y) * y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES), torch.randn(BATCH, OUT_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
