# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Minimum over one axis (values only)."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "min_dim",
    "level": 1,
    "tags": ["reduction"],
    "ops": ["min"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 256, "DIM2": 256},
    "description": "torch.min(x, dim=1).values.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.min(x, dim=self.dim).values


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
