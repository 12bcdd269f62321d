# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Instance normalisation: per-sample, per-channel statistics."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 8
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "instance_norm",
    "level": 1,
    "tags": ["normalization", "instance_norm"],
    "ops": ["instance_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 256, "WIDTH": 256},
    "description": "nn.InstanceNorm2d(affine=True) (no running statistics, so train and eval agree).",
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
