# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""An nn.Parameter and a registered constant buffer used directly in forward."""

import torch
import torch.nn as nn

BATCH = 8
DIM = 64

STEPTP = {
    "name": "parameter_and_constant",
    "level": 1,
    "tags": ["parameter", "buffer", "elementwise", "broadcast"],
    "ops": ["mul", "add", "sub", "exp", "arange"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "x * weight + position ramp, where weight is a parameter and the ramp a "
    "constant buffer made with arange.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.register_buffer("ramp", torch.arange(dim, dtype=torch.float32) / dim)

    def forward(self, x):
        return x * self.weight + torch.exp(-self.ramp) - self.ramp


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
