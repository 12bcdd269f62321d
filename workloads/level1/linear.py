# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""nn.Linear with bias: y = x W^T + b."""

import torch
import torch.nn as nn

BATCH = 16
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "linear",
    "level": 1,
    "tags": ["linear", "gemm", "parameter"],
    "ops": ["linear"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "A fully connected layer; its weight and bias are parameters of the model.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
