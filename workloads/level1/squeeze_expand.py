# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Squeeze, unsqueeze, expand and repeat to build an outer sum."""

import torch
import torch.nn as nn

BATCH = 4
ROWS = 32
COLS = 48

STEPTP = {
    "name": "squeeze_expand",
    "level": 1,
    "tags": ["layout", "broadcast"],
    "ops": ["squeeze", "unsqueeze", "expand", "repeat", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "ROWS": 1024, "COLS": 1024},
    "description": "a (B, R, 1) squeezed and re-expanded against b (B, 1, C), plus a repeated bias row.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        rows = a.squeeze(-1).unsqueeze(2).expand(BATCH, ROWS, COLS)
        cols = b.expand(-1, ROWS, -1)
        return rows + cols + bias.unsqueeze(0).repeat(ROWS, 1)


def get_inputs():
    return [torch.randn(BATCH, ROWS, 1), torch.randn(BATCH, 1, COLS), torch.randn(COLS)]


def get_init_inputs():
    return []
