# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Global average pooling in 1-D and 3-D via adaptive pooling to size 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 8
DEPTH = 4
HEIGHT = 8
WIDTH = 8

STEPTP = {
    "name": "adaptive_avg_pool_global",
    "level": 1,
    "tags": ["pooling", "avg_pool", "adaptive"],
    "ops": ["adaptive_avg_pool3d", "adaptive_avg_pool1d", "flatten"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 256, "DEPTH": 16, "HEIGHT": 32, "WIDTH": 32},
    "description": "adaptive_avg_pool3d to (1, 1, 1) per channel, then adaptive_avg_pool1d to 1 "
    "over the channel axis.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        pooled = F.adaptive_avg_pool3d(x, 1).flatten(2)
        return F.adaptive_avg_pool1d(pooled.transpose(1, 2), 1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
