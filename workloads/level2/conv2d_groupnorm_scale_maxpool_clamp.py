# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, group norm, scale, max pooling, clamp."""

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
    "name": "conv2d_groupnorm_scale_maxpool_clamp",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "normalization", "group_norm", "pooling", "parameter"],
    "ops": ["conv2d", "group_norm", "mul", "max_pool2d", "clamp"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> GroupNorm -> * scale -> MaxPool2d -> clamp.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(2, out_channels)
        self.scale = nn.Parameter(1.0 + 0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x)
        y = self.norm(y) * self.scale
        y = F.max_pool2d(y, kernel_size=2)
        y = torch.clamp(y, -1.0, 1.0)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
