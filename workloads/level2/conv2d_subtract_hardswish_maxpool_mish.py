# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, subtract, hardswish, max pooling, Mish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
SUBTRACT = 0.5

STEPTP = {
    "name": "conv2d_subtract_hardswish_maxpool_mish",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "pooling"],
    "ops": ["conv2d", "sub", "hardswish", "max_pool2d", "mish"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> - SUBTRACT -> HardSwish -> MaxPool2d(2) -> Mish.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract = subtract

    def forward(self, x):
        y = self.conv(x)
        y = F.hardswish(y - self.subtract)
        y = F.max_pool2d(y, 2)
        y = F.mish(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, SUBTRACT]
