# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Transposed 1-D convolution with stride, padding, output_padding and dilation."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 4
LENGTH = 32
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv_transpose1d",
    "level": 1,
    "tags": ["conv", "conv_transpose", "conv1d", "stride", "dilation"],
    "ops": ["conv_transpose1d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "IN_CHANNELS": 64, "OUT_CHANNELS": 32, "LENGTH": 16384, "KERNEL_SIZE": 3},
    "description": "nn.ConvTranspose1d(stride=2, padding=1, output_padding=1, dilation=2): the "
    "adjoint of a strided convolution.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose1d(
            in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1, dilation=2
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
