# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GELU with the tanh approximation."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "gelu_tanh",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "F.gelu(approximate='tanh'): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
