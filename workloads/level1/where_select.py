# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Elementwise selection with torch.where on a computed condition."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256
THRESHOLD = 0.25

STEPTP = {
    "name": "where_select",
    "level": 1,
    "tags": ["elementwise", "where", "compare"],
    "ops": ["gt", "where"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "torch.where(x > THRESHOLD, x, y * 0.1): a comparison feeding a select.",
}


class Model(nn.Module):
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def forward(self, x, y):
        return torch.where(x > self.threshold, x, y * 0.1)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [THRESHOLD]
