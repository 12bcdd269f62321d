# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Group normalisation followed by SiLU, the pre-activation of diffusion ResNet blocks."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 16
GROUPS = 4
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "groupnorm_silu",
    "level": 2,
    "tags": ["normalization", "group_norm"],
    "ops": ["group_norm", "silu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 320, "GROUPS": 32, "HEIGHT": 64, "WIDTH": 64},
    "description": "F.group_norm with weight and bias parameters -> SiLU.",
}


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))

    def forward(self, x):
        return F.silu(F.group_norm(x, self.groups, self.weight, self.bias, eps=1e-5))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [GROUPS, CHANNELS]
