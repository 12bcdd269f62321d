# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Basic, strided and negative-index slicing plus narrow and select."""

import torch
import torch.nn as nn

BATCH = 4
LENGTH = 64
DIM = 32

STEPTP = {
    "name": "slicing",
    "level": 1,
    "tags": ["layout", "slicing"],
    "ops": ["getitem", "narrow", "select", "add", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "LENGTH": 4096, "DIM": 1024},
    "description": "Even/odd interleave (x[:, 0::2] and x[:, 1::2]), a narrow window and the last time step.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        even = x[:, 0::2, :]
        odd = x[:, 1::2, :]
        window = torch.narrow(x, 1, 2, LENGTH // 2)
        last = x.select(1, -1).unsqueeze(1)
        tail = x[:, -(LENGTH // 2) :, :]
        return even * odd + window - tail + last


def get_inputs():
    return [torch.randn(BATCH, LENGTH, DIM)]


def get_init_inputs():
    return []
