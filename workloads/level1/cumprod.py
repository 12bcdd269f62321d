# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Inclusive prefix product along an axis."""

import torch
import torch.nn as nn

BATCH = 16
LENGTH = 128
DIM = 1

STEPTP = {
    "name": "cumprod",
    "level": 1,
    "tags": ["scan", "cumprod"],
    "ops": ["cumprod"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "LENGTH": 4000},
    "description": "torch.cumprod(x, dim=1) on values near 1 so the running product stays finite.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    return [1.0 + 0.02 * torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return [DIM]
