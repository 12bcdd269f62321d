# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""2-D max pooling with a 3x3 window, stride 2 and padding 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 8
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "max_pool2d",
    "level": 1,
    "tags": ["pooling", "max_pool"],
    "ops": ["max_pool2d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 32, "HEIGHT": 256, "WIDTH": 256},
    "description": "The ResNet stem pooling layer.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
