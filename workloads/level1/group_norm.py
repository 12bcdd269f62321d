# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Group normalisation of a feature map."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 8
GROUPS = 4
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "group_norm",
    "level": 1,
    "tags": ["normalization", "group_norm"],
    "ops": ["group_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "GROUPS": 8, "HEIGHT": 256, "WIDTH": 256},
    "description": "nn.GroupNorm(GROUPS, CHANNELS): mean and variance per sample over each group "
    "of channels.",
}


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [GROUPS, CHANNELS]
