# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, per-channel multiplier, leaky ReLU, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d_multiply_leaky_relu_gelu",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "parameter"],
    "ops": ["conv2d", "mul", "leaky_relu", "gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> * learnable (C, 1, 1) multiplier -> LeakyReLU -> GELU.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x)
        y = F.gelu(F.leaky_relu(y * self.multiplier))
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
