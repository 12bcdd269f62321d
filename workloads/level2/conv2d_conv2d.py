# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Two 2-D convolutions in sequence (the second strided)."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
HIDDEN = 8
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "conv2d_conv2d",
    "level": 2,
    "tags": ["conv", "conv2d", "stride"],
    "ops": ["conv2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 3,
        "HIDDEN": 64,
        "OUT_CHANNELS": 128,
        "HEIGHT": 224,
        "WIDTH": 224,
    },
    "description": "Conv2d(3x3) -> Conv2d(3x3, stride=2): no activation between, so the two could "
    "be composed.",
}


class Model(nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, hidden, 3)
        self.conv2 = nn.Conv2d(hidden, out_channels, 3, stride=2)

    def forward(self, x):
        return self.conv2(self.conv1(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, HIDDEN, OUT_CHANNELS]
