# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, subtract, tanh, subtract, average pooling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
SUBTRACT1 = 0.5
SUBTRACT2 = 0.2

STEPTP = {
    "name": "conv2d_subtract_tanh_avgpool",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "pooling"],
    "ops": ["conv2d", "sub", "tanh", "avg_pool2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> - S1 -> tanh -> - S2 -> AvgPool2d(2).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract1, subtract2):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract1 = subtract1
        self.subtract2 = subtract2

    def forward(self, x):
        y = self.conv(x)
        y = torch.tanh(y - self.subtract1) - self.subtract2
        y = F.avg_pool2d(y, 2)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, SUBTRACT1, SUBTRACT2]
