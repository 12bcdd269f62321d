# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Squeeze-and-excitation channel attention on a feature map."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 16
REDUCTION = 4
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "squeeze_excitation",
    "level": 2,
    "tags": ["conv", "pooling", "gemm", "attention"],
    "ops": ["adaptive_avg_pool2d", "flatten", "linear", "relu", "sigmoid", "view", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 32, "CHANNELS": 256, "REDUCTION": 16, "HEIGHT": 56, "WIDTH": 56},
    "description": "Global average pool -> Linear -> ReLU -> Linear -> sigmoid gates that rescale "
    "every channel.",
}


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        squeezed = F.adaptive_avg_pool2d(x, 1).flatten(1)
        gates = torch.sigmoid(self.fc2(torch.relu(self.fc1(squeezed))))
        return x * gates.view(BATCH, CHANNELS, 1, 1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, REDUCTION]
