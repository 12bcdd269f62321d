# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Adaptive 2-D average pooling to an output size that does not divide the input."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 8
HEIGHT = 10
WIDTH = 9
OUT_H = 4
OUT_W = 3

STEPTP = {
    "name": "adaptive_avg_pool2d",
    "level": 1,
    "tags": ["pooling", "avg_pool", "adaptive"],
    "ops": ["adaptive_avg_pool2d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 512, "HEIGHT": 14, "WIDTH": 14, "OUT_H": 7, "OUT_W": 7},
    "description": "nn.AdaptiveAvgPool2d((4, 3)) on a 10x9 map: windows of varying size and overlap.",
}


class Model(nn.Module):
    def __init__(self, out_h, out_w):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((out_h, out_w))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [OUT_H, OUT_W]
