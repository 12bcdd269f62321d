# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, swish, divide, clamp, tanh, clamp."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_swish_divide_clamp_tanh",
    "level": 2,
    "tags": ["gemm", "epilogue"],
    "ops": ["linear", "sigmoid", "mul", "truediv", "clamp", "tanh"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "A long elementwise epilogue: swish, /2, clamp, tanh, clamp.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = y * torch.sigmoid(y)
        y = y / 2.0
        y = torch.clamp(y, min=-1.0, max=1.0)
        y = torch.tanh(y)
        y = torch.clamp(y, min=-1.0, max=1.0)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
