# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""MobileNet block: depthwise conv, batch norm, ReLU6, pointwise conv, batch norm."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 8
OUT_CHANNELS = 16
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "mobilenet_separable_block",
    "level": 2,
    "tags": ["conv", "conv2d", "depthwise", "pointwise", "normalization", "batch_norm", "train"],
    "ops": ["conv2d", "batch_norm", "hardtanh"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 32, "IN_CHANNELS": 32, "OUT_CHANNELS": 64, "HEIGHT": 112, "WIDTH": 112},
    "description": "Depthwise 3x3 (stride 2) and pointwise 1x1 convolutions, each with "
    "batch-statistics BatchNorm2d (track_running_stats=False) and ReLU6.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_channels, in_channels, 3, stride=2, padding=1, groups=in_channels, bias=False),
            nn.BatchNorm2d(in_channels, track_running_stats=False),
            nn.ReLU6(),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels, track_running_stats=False),
            nn.ReLU6(),
        )

    def forward(self, x):
        return self.block(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
