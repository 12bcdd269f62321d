# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Cumulative sum of only the elements selected by a boolean mask."""

import torch
import torch.nn as nn

BATCH = 16
LENGTH = 256
DIM = 1

STEPTP = {
    "name": "masked_cumsum",
    "level": 1,
    "tags": ["scan", "cumsum", "mask"],
    "ops": ["mul", "cumsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "LENGTH": 4000},
    "description": "torch.cumsum(x * mask, dim=1) with a bool mask input.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH), torch.randn(BATCH, LENGTH) > 0]


def get_init_inputs():
    return [DIM]
