# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Transposed 3-D convolution with stride, padding and output_padding."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 4
DEPTH = 4
HEIGHT = 6
WIDTH = 6
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv_transpose3d",
    "level": 1,
    "tags": ["conv", "conv_transpose", "conv3d", "stride"],
    "ops": ["conv_transpose3d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 32,
        "OUT_CHANNELS": 16,
        "DEPTH": 16,
        "HEIGHT": 32,
        "WIDTH": 32,
        "KERNEL_SIZE": 3,
    },
    "description": "nn.ConvTranspose3d(stride=2, padding=1, output_padding=1) doubles every spatial extent.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
