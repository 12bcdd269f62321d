# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Exclusive prefix sum built with cat of a zero column and slicing."""

import torch
import torch.nn as nn

BATCH = 16
LENGTH = 256
DIM = 1

STEPTP = {
    "name": "cumsum_exclusive",
    "level": 1,
    "tags": ["scan", "cumsum", "cat", "slicing"],
    "ops": ["zeros_like", "select", "unsqueeze", "cat", "getitem", "cumsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "LENGTH": 4000},
    "description": "cumsum(cat([0, x]))[:-1]: element i is the sum of elements strictly before i.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        zero = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        shifted = torch.cat((zero, x), dim=self.dim)[:, :-1]
        return torch.cumsum(shifted, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return [DIM]
