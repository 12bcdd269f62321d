# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Transposed 2-D convolution (upsampling by 2) with output_padding."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 4
HEIGHT = 8
WIDTH = 8
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv_transpose2d",
    "level": 1,
    "tags": ["conv", "conv_transpose", "conv2d", "stride"],
    "ops": ["conv_transpose2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 64,
        "OUT_CHANNELS": 32,
        "HEIGHT": 128,
        "WIDTH": 128,
        "KERNEL_SIZE": 3,
    },
    "description": "nn.ConvTranspose2d(stride=2, padding=1, output_padding=1) doubles the spatial size.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
