# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, ReLU, then an added per-channel bias parameter."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d_bias_relu",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "parameter"],
    "ops": ["conv2d", "relu", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> ReLU -> + bias of shape (C, 1, 1).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x)
        y = torch.relu(y) + self.bias
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
