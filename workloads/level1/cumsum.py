# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Inclusive prefix sum along an axis."""

import torch
import torch.nn as nn

BATCH = 16
LENGTH = 256
DIM = 1

STEPTP = {
    "name": "cumsum",
    "level": 1,
    "tags": ["scan", "cumsum"],
    "ops": ["cumsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "LENGTH": 4000},
    "description": "torch.cumsum(x, dim=1).",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return [DIM]
