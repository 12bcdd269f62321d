# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Row-wise L1 normalisation: x / sum(|x|)."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "l1_normalize",
    "level": 1,
    "tags": ["reduction", "norm"],
    "ops": ["abs", "sum", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "Each row divided by its L1 norm (abs, sum with keepdim, broadcast division).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
