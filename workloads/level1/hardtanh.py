# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Hardtanh: clamp to [min_val, max_val]."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256
MIN_VAL = -0.5
MAX_VAL = 1.5

STEPTP = {
    "name": "hardtanh",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["hardtanh"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "Piecewise-linear tanh: clamp(x, min_val, max_val).",
}


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [MIN_VAL, MAX_VAL]
