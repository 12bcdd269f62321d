# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Softmax over the last axis."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "softmax",
    "level": 1,
    "tags": ["softmax", "reduction"],
    "ops": ["softmax"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "size_ranges": {"BATCH": [4, 32, 4], "DIM": [64, 512, 64]},
    "description": "torch.softmax(x, dim=-1); max-subtraction keeps it stable.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
