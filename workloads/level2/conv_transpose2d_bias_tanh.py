# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Transposed 2-D convolution, bias subtraction, tanh."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 4
HEIGHT = 8
WIDTH = 8
KERNEL_SIZE = 4

STEPTP = {
    "name": "conv_transpose2d_bias_tanh",
    "level": 2,
    "tags": ["conv", "conv_transpose", "conv2d", "epilogue", "parameter"],
    "ops": ["conv_transpose2d", "sub", "tanh"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 32,
        "OUT_CHANNELS": 16,
        "HEIGHT": 64,
        "WIDTH": 64,
        "KERNEL_SIZE": 4,
    },
    "description": "ConvTranspose2d(stride=2, padding=1) -> - bias (C, 1, 1) -> tanh.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=2, padding=1)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.tanh(self.conv(x) - self.bias)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
