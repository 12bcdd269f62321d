# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""3-D convolution with an asymmetric kernel, stride, padding and groups."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 4
DEPTH = 8
HEIGHT = 12
WIDTH = 12

STEPTP = {
    "name": "conv3d_asymmetric_strided",
    "level": 1,
    "tags": ["conv", "conv3d", "stride", "padding", "groups"],
    "ops": ["conv3d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 32,
        "OUT_CHANNELS": 64,
        "DEPTH": 32,
        "HEIGHT": 128,
        "WIDTH": 128,
    },
    "description": "nn.Conv3d(kernel=(3, 5, 3), stride=(1, 2, 2), padding=(1, 2, 0), groups=2, bias=False).",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(
            in_channels, out_channels, (3, 5, 3), stride=(1, 2, 2), padding=(1, 2, 0), groups=2, bias=False
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
