# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Product over one axis."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "prod_dim",
    "level": 1,
    "tags": ["reduction"],
    "ops": ["prod"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 256, "DIM2": 256},
    "description": "torch.prod(x, dim=1); inputs are near 1 so the product stays finite.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.prod(x, dim=self.dim)


def get_inputs():
    return [1.0 + 0.05 * torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
