# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, instance norm, division by a constant."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
DIVIDE_BY = 2.0

STEPTP = {
    "name": "conv2d_instance_norm_divide",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "normalization", "instance_norm"],
    "ops": ["conv2d", "instance_norm", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> InstanceNorm2d -> / DIVIDE_BY.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divide_by = divide_by
        self.norm = nn.InstanceNorm2d(out_channels)

    def forward(self, x):
        y = self.conv(x)
        y = self.norm(y) / self.divide_by
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, DIVIDE_BY]
