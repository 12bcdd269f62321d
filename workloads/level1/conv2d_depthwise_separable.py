# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Depthwise-separable convolution: depthwise 3x3 then pointwise 1x1."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 16
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d_depthwise_separable",
    "level": 1,
    "tags": ["conv", "conv2d", "depthwise", "pointwise", "groups"],
    "ops": ["conv2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 64,
        "HEIGHT": 512,
        "WIDTH": 512,
        "KERNEL_SIZE": 3,
    },
    "description": "MobileNet's factorised convolution as two nn.Conv2d layers.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.depthwise = nn.Conv2d(
            in_channels, in_channels, kernel_size, padding=kernel_size // 2, groups=in_channels, bias=False
        )
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
