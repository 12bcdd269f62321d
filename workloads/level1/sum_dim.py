# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Sum over one axis, keeping it."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "sum_dim",
    "level": 1,
    "tags": ["reduction"],
    "ops": ["sum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 256, "DIM2": 256},
    "description": "torch.sum(x, dim=1, keepdim=True).",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
