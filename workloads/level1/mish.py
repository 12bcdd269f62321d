# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Mish activation: x * tanh(softplus(x))."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "mish",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["mish"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "x * tanh(log(1 + exp(x))).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.mish(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
