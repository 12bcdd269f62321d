# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Add, subtract, multiply and divide operands of different ranks."""

import torch
import torch.nn as nn

BATCH = 4
ROWS = 32
COLS = 64

STEPTP = {
    "name": "broadcast_arithmetic",
    "level": 1,
    "tags": ["elementwise", "broadcast"],
    "ops": ["mul", "add", "sub", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "ROWS": 1024, "COLS": 1024},
    "description": "(x * col + row) / (1 + scalar^2) - 0.5 with (B, R, C), (B, R, 1), (C,) and "
    "(1,) operands.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, col, row, scalar):
        return (x * col + row) / (1.0 + scalar * scalar) - 0.5


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS), torch.randn(BATCH, ROWS, 1), torch.randn(COLS), torch.randn(1)]


def get_init_inputs():
    return []
