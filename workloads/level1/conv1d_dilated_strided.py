# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""1-D convolution with stride, padding and dilation, without bias."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
LENGTH = 80
KERNEL_SIZE = 3
STRIDE = 3
PADDING = 2
DILATION = 4

STEPTP = {
    "name": "conv1d_dilated_strided",
    "level": 1,
    "tags": ["conv", "conv1d", "dilation", "stride"],
    "ops": ["conv1d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "IN_CHANNELS": 64,
        "OUT_CHANNELS": 128,
        "LENGTH": 131072,
        "KERNEL_SIZE": 3,
        "STRIDE": 3,
        "PADDING": 2,
        "DILATION": 4,
    },
    "description": "nn.Conv1d(stride=3, padding=2, dilation=4, bias=False): gaps in the kernel and "
    "in the output.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv1d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=False,
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, DILATION]
