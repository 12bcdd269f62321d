# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""3-D convolution, channel softmax, two max poolings."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 3
OUT_CHANNELS = 4
DEPTH = 10
HEIGHT = 10
WIDTH = 10
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv3d_softmax_maxpool",
    "level": 2,
    "tags": ["conv", "conv3d", "epilogue", "softmax", "pooling"],
    "ops": ["conv3d", "softmax", "max_pool3d"],
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
    "description": "Conv3d -> softmax over channels -> MaxPool3d(2) x2.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        y = torch.softmax(y, dim=1)
        y = F.max_pool3d(y, 2)
        y = F.max_pool3d(y, 2)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
