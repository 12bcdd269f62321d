# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""3-D max pooling with dilation."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 4
DEPTH = 8
HEIGHT = 10
WIDTH = 10

STEPTP = {
    "name": "max_pool3d",
    "level": 1,
    "tags": ["pooling", "max_pool"],
    "ops": ["max_pool3d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 32, "DEPTH": 64, "HEIGHT": 64, "WIDTH": 64},
    "description": "nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=2).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
