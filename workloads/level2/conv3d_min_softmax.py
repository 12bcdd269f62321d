# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""3-D convolution, minimum over depth, channel softmax."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 3
OUT_CHANNELS = 4
DEPTH = 8
HEIGHT = 8
WIDTH = 8
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv3d_min_softmax",
    "level": 2,
    "tags": ["conv", "conv3d", "epilogue", "reduction", "softmax"],
    "ops": ["conv3d", "min", "softmax"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "DEPTH": 16,
        "HEIGHT": 32,
        "WIDTH": 32,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv3d -> min over the depth axis -> softmax over channels.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        y = torch.min(y, dim=2)[0]
        y = torch.softmax(y, dim=1)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
