# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""SELU activation (self-normalising ELU)."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "selu",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["selu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with the fixed SELU constants.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.selu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
