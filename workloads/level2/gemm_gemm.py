# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Two chained linear layers with a ReLU in between (an MLP)."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 64
HIDDEN = 128
OUT_FEATURES = 48

STEPTP = {
    "name": "gemm_gemm",
    "level": 2,
    "tags": ["gemm", "mlp"],
    "ops": ["linear", "relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "HIDDEN": 16384, "OUT_FEATURES": 4096},
    "description": "Linear -> ReLU -> Linear.",
}


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES]
