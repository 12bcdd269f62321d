# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Grouped, dilated transposed 2-D convolution with an asymmetric kernel."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 6
GROUPS = 2
HEIGHT = 8
WIDTH = 10

STEPTP = {
    "name": "conv_transpose2d_grouped_dilated",
    "level": 1,
    "tags": ["conv", "conv_transpose", "conv2d", "groups", "dilation", "stride"],
    "ops": ["conv_transpose2d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 32,
        "OUT_CHANNELS": 64,
        "GROUPS": 2,
        "HEIGHT": 128,
        "WIDTH": 256,
    },
    "description": "nn.ConvTranspose2d(kernel=(3, 2), stride=(2, 3), padding=(1, 0), "
    "output_padding=(1, 2), dilation=(2, 1), groups=2, bias=False).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            (3, 2),
            stride=(2, 3),
            padding=(1, 0),
            output_padding=(1, 2),
            dilation=(2, 1),
            groups=groups,
            bias=False,
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
