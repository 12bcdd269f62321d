# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Standard 3-D convolution with a cubic kernel."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 3
OUT_CHANNELS = 4
DEPTH = 8
HEIGHT = 10
WIDTH = 12
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv3d",
    "level": 1,
    "tags": ["conv", "conv3d"],
    "ops": ["conv3d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 64,
        "DEPTH": 64,
        "HEIGHT": 64,
        "WIDTH": 64,
        "KERNEL_SIZE": 3,
    },
    "description": "nn.Conv3d with bias, stride 1, no padding.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
