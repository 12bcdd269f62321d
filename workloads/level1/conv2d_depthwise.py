# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Depthwise 2-D convolution (groups == channels) with padding."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d_depthwise",
    "level": 1,
    "tags": ["conv", "conv2d", "depthwise", "groups"],
    "ops": ["conv2d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 512, "WIDTH": 512, "KERNEL_SIZE": 3},
    "description": "Every channel is convolved with its own single-channel kernel.",
}


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=1, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE]
