# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Upper and lower triangles with diagonal offsets."""

import torch
import torch.nn as nn

BATCH = 4
N = 32

STEPTP = {
    "name": "triu_tril",
    "level": 1,
    "tags": ["triangular", "mask"],
    "ops": ["triu", "tril"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "N": 4096},
    "description": "triu(x, 1) - 2 * tril(x, -2) on a batch of square matrices.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.triu(x, diagonal=1) - 2.0 * torch.tril(x, diagonal=-2)


def get_inputs():
    return [torch.randn(BATCH, N, N)]


def get_init_inputs():
    return []
