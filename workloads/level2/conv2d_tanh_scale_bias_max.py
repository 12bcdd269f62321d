# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, tanh, scaling, bias, max pooling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
SCALE = 2.0

STEPTP = {
    "name": "conv2d_tanh_scale_bias_max",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "pooling", "parameter"],
    "ops": ["conv2d", "tanh", "mul", "add", "max_pool2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> tanh -> * SCALE -> + bias -> MaxPool2d(2).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale = scale
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x)
        y = torch.tanh(y) * self.scale + self.bias
        y = F.max_pool2d(y, kernel_size=2, stride=2)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, SCALE]
