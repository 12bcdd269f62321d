# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Maximum and minimum over two axes at once."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "amax_multi_dim",
    "level": 1,
    "tags": ["reduction"],
    "ops": ["amax", "amin", "sub"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 256, "DIM2": 256},
    "description": "The range (amax - amin) over the last two axes.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.amax(x, dim=(self.dim, 2)) - torch.amin(x, dim=(self.dim, 2))


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
