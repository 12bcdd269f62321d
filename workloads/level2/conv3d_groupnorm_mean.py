# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""3-D convolution, group norm, mean over all but the batch."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 3
OUT_CHANNELS = 4
DEPTH = 8
HEIGHT = 8
WIDTH = 8
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv3d_groupnorm_mean",
    "level": 2,
    "tags": ["conv", "conv3d", "epilogue", "normalization", "group_norm", "reduction"],
    "ops": ["conv3d", "group_norm", "mean"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "DEPTH": 16,
        "HEIGHT": 32,
        "WIDTH": 32,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv3d -> GroupNorm(2) -> mean per sample.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(2, out_channels)

    def forward(self, x):
        y = self.conv(x)
        y = self.norm(y).mean(dim=[1, 2, 3, 4])
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
