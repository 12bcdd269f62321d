# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Clamp to a range, with tensor-valued and scalar bounds."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256
MIN_VALUE = -0.5
MAX_VALUE = 0.75

STEPTP = {
    "name": "clamp",
    "level": 1,
    "tags": ["elementwise", "clamp"],
    "ops": ["clamp", "clamp_min", "maximum", "minimum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "torch.clamp(x, min, max) plus clamp_min and an elementwise maximum/minimum "
    "with a second tensor.",
}


class Model(nn.Module):
    def __init__(self, min_value, max_value):
        super().__init__()
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x, y):
        clipped = torch.clamp(x, min=self.min_value, max=self.max_value)
        return clipped + torch.clamp_min(y, 0.0) + torch.minimum(torch.maximum(x, y), x * 0.5)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [MIN_VALUE, MAX_VALUE]
