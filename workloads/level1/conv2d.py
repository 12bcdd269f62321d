# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Standard 2-D convolution, square kernel, asymmetric input."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 12
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d",
    "level": 1,
    "tags": ["conv", "conv2d"],
    "ops": ["conv2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 64,
        "HEIGHT": 256,
        "WIDTH": 128,
        "KERNEL_SIZE": 3,
    },
    "description": "nn.Conv2d with bias, stride 1, no padding.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
