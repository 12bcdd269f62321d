# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Swish written as x * torch.sigmoid(x)."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "swish_manual",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["sigmoid", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "The same function as SiLU, composed from sigmoid and a product.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
