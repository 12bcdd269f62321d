# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Concatenate, split and chunk along different axes."""

import torch
import torch.nn as nn

BATCH = 4
DIM = 48
EXTRA = 16

STEPTP = {
    "name": "cat_split_chunk",
    "level": 1,
    "tags": ["layout"],
    "ops": ["cat", "split", "chunk", "stack", "mul", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 4096, "EXTRA": 1024},
    "description": "Halves from chunk, unequal parts from split, recombined with cat and stack.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        left, right = torch.chunk(x, 2, dim=1)
        head, tail = torch.split(y, [EXTRA // 2, EXTRA - EXTRA // 2], dim=1)
        mixed = torch.cat((right * left, tail, head), dim=1)
        return torch.stack((mixed, mixed + 1.0), dim=0)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, EXTRA)]


def get_init_inputs():
    return []
