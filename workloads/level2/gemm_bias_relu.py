# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM with a separate bias vector and ReLU epilogue."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_bias_relu",
    "level": 2,
    "tags": ["gemm", "epilogue", "parameter"],
    "ops": ["linear", "add", "relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear, + an extra bias parameter, ReLU.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x):
        y = self.fc(x)
        y = torch.relu(y + self.bias)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
