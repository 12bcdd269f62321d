# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, group norm, SiLU (the diffusion U-Net block)."""

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
    "name": "conv2d_groupnorm_silu",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "normalization", "group_norm", "padding"],
    "ops": ["conv2d", "group_norm", "silu"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "size_ranges": {
        "BATCH": [1, 4],
        "IN_CHANNELS": [2, 8, 2],
        "OUT_CHANNELS": [4, 16, 4],
        "HEIGHT": [8, 24, 8],
        "WIDTH": [8, 24, 8],
    },
    "description": "Conv2d(padding=1) -> GroupNorm(4) -> SiLU.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(4, out_channels)

    def forward(self, x):
        y = self.conv(x)
        y = F.silu(self.norm(y))
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
