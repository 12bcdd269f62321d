# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, average pooling, sigmoid, sum over everything but the batch."""

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
    "name": "conv2d_avgpool_sigmoid_sum",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "pooling", "reduction"],
    "ops": ["conv2d", "avg_pool2d", "sigmoid", "sum"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> AvgPool2d(2) -> sigmoid -> sum over (C, H, W).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        y = torch.sigmoid(F.avg_pool2d(y, kernel_size=2))
        y = torch.sum(y, dim=[1, 2, 3])
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
