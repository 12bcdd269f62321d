# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Same-padded convolution added to its input (a residual connection)."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d_residual_add",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "residual", "padding"],
    "ops": ["conv2d", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 32,
        "IN_CHANNELS": 64,
        "OUT_CHANNELS": 64,
        "HEIGHT": 128,
        "WIDTH": 128,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d(padding=1) with IN_CHANNELS == OUT_CHANNELS, output + input.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        y = self.conv(x)
        y = y + x
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
