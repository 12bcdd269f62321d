# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Sum over every element (a scalar)."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "sum_all",
    "level": 1,
    "tags": ["reduction"],
    "ops": ["sum", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 4096, "DIM2": 4096},
    "description": "x.sum() scaled by the constructor argument.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.sum() * self.dim


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
