# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, minimum over channels, tanh twice."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv2d_min_tanh_tanh",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "reduction"],
    "ops": ["conv2d", "min", "tanh"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> min over channels (keepdim) -> tanh -> tanh.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        y = torch.min(y, dim=1, keepdim=True)[0]
        y = torch.tanh(torch.tanh(y))
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
