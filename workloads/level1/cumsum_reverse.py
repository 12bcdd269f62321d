# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Reverse (suffix) cumulative sum via flip, cumsum, flip."""

import torch
import torch.nn as nn

BATCH = 16
LENGTH = 256
DIM = 1

STEPTP = {
    "name": "cumsum_reverse",
    "level": 1,
    "tags": ["scan", "cumsum", "flip"],
    "ops": ["flip", "cumsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "LENGTH": 4000},
    "description": "x.flip(1).cumsum(1).flip(1): each element is the sum of itself and everything after it.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return [DIM]
