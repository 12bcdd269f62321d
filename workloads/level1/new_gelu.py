# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""The minGPT 'NewGELU' written out with tanh, pow and math constants."""

import math

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "new_gelu",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["mul", "add", "pow", "tanh"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "The tanh GELU approximation spelled with elementary ops.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
