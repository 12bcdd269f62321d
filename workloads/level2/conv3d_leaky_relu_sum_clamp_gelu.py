# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""3-D convolution, leaky ReLU, add a tensor, clamp, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 3
OUT_CHANNELS = 4
DEPTH = 8
HEIGHT = 8
WIDTH = 8
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv3d_leaky_relu_sum_clamp_gelu",
    "level": 2,
    "tags": ["conv", "conv3d", "epilogue", "parameter"],
    "ops": ["conv3d", "leaky_relu", "add", "clamp", "gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "DEPTH": 16,
        "HEIGHT": 32,
        "WIDTH": 32,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv3d -> LeakyReLU(0.2) -> + (C,1,1,1) parameter -> clamp -> GELU.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.sum_tensor = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1, 1))

    def forward(self, x):
        y = self.conv(x)
        y = F.leaky_relu(y, negative_slope=0.2) + self.sum_tensor
        y = F.gelu(torch.clamp(y, -1.0, 1.0))
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
