# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Pointwise (1x1) 2-D convolution."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 16
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "conv2d_pointwise",
    "level": 1,
    "tags": ["conv", "conv2d", "pointwise"],
    "ops": ["conv2d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "IN_CHANNELS": 64, "OUT_CHANNELS": 128, "HEIGHT": 256, "WIDTH": 256},
    "description": "A 1x1 convolution: a channel-mixing GEMM at every pixel.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
