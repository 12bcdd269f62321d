# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Local contrast normalisation: a padded box filter gives the local mean of x and of x*x."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 2
HEIGHT = 8
WIDTH = 8

STEPTP = {
    "name": "local_contrast_norm",
    "level": 2,
    "tags": ["conv", "conv2d", "depthwise", "padding", "normalization"],
    "ops": ["conv2d", "mul", "sub", "sqrt", "div"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 256, "WIDTH": 256},
    "description": "Depthwise 3x3 box filter (padding=1) of x and of x*x -> (x - mean) / sqrt(var + eps): "
    "the same padded convolution on two inputs.",
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.channels = channels
        self.register_buffer("window", torch.full((channels, 1, 3, 3), 1.0 / 9.0))

    def forward(self, x):
        mean = F.conv2d(x, self.window, padding=1, groups=self.channels)
        square = F.conv2d(x * x, self.window, padding=1, groups=self.channels)
        var = torch.clamp(square - mean * mean, min=0.0)
        return (x - mean) / torch.sqrt(var + 1e-5)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
