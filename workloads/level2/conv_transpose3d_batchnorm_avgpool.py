# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Transposed 3-D convolution, eval batch norm, two average poolings."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 4
DEPTH = 4
HEIGHT = 6
WIDTH = 6
KERNEL_SIZE = 3

STEPTP = {
    "name": "conv_transpose3d_batchnorm_avgpool",
    "level": 2,
    "tags": [
        "conv",
        "conv_transpose",
        "conv3d",
        "epilogue",
        "normalization",
        "batch_norm",
        "eval",
        "pooling",
    ],
    "ops": ["conv_transpose3d", "batch_norm", "avg_pool3d"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 64,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "DEPTH": 32,
        "HEIGHT": 32,
        "WIDTH": 32,
        "KERNEL_SIZE": 3,
    },
    "description": "ConvTranspose3d(stride=2, padding=1, output_padding=1) -> BatchNorm3d (running "
    "stats) -> AvgPool3d(2) x2.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1
        )
        self.register_buffer("running_mean", 0.1 * torch.randn(out_channels))
        self.register_buffer("running_var", 0.5 + torch.rand(out_channels))

    def forward(self, x):
        y = self.conv(x)
        y = F.batch_norm(y, self.running_mean, self.running_var, training=False)
        return F.avg_pool3d(F.avg_pool3d(y, 2), 2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
