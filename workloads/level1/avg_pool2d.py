# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""2-D average pooling that excludes padding from the divisor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 8
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "avg_pool2d",
    "level": 1,
    "tags": ["pooling", "avg_pool"],
    "ops": ["avg_pool2d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 256, "WIDTH": 256},
    "description": "F.avg_pool2d(kernel_size=3, stride=2, padding=1, count_include_pad=False): "
    "border windows divide by fewer elements.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.avg_pool2d(x, kernel_size=3, stride=2, padding=1, count_include_pad=False)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
