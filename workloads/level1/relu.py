# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""ReLU activation."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "relu",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "max(x, 0) elementwise.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
