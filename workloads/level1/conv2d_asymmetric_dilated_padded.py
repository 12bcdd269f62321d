# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""2-D convolution with an asymmetric kernel, per-axis stride, padding and dilation."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 6
HEIGHT = 16
WIDTH = 16
KERNEL_H = 3
KERNEL_W = 5

STEPTP = {
    "name": "conv2d_asymmetric_dilated_padded",
    "level": 1,
    "tags": ["conv", "conv2d", "dilation", "stride", "padding"],
    "ops": ["conv2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 64,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_H": 3,
        "KERNEL_W": 5,
    },
    "description": "nn.Conv2d(kernel=(3, 5), stride=(1, 2), padding=(1, 2), dilation=(2, 1)).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_h, kernel_w):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, (kernel_h, kernel_w), stride=(1, 2), padding=(1, 2), dilation=(2, 1)
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_H, KERNEL_W]
