# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, divide by a constant, leaky ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
DIVISOR = 2.0

STEPTP = {
    "name": "conv2d_divide_leaky_relu",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue"],
    "ops": ["conv2d", "truediv", "leaky_relu"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> / DIVISOR -> LeakyReLU(0.01).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        y = self.conv(x)
        y = F.leaky_relu(y / self.divisor, negative_slope=0.01)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, DIVISOR]
