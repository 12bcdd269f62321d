# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Standard 1-D convolution with bias."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
LENGTH = 64
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv1d",
    "level": 1,
    "tags": ["conv", "conv1d"],
    "ops": ["conv1d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "IN_CHANNELS": 64, "OUT_CHANNELS": 128, "LENGTH": 65536, "KERNEL_SIZE": 3},
    "description": "nn.Conv1d, stride 1, no padding.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
