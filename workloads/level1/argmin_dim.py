# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Index of the minimum over one axis."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "argmin_dim",
    "level": 1,
    "tags": ["reduction", "index"],
    "ops": ["argmin"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 256, "DIM2": 256},
    "description": "torch.argmin(x, dim=1): an int64 result.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmin(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
