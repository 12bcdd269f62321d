# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Hyperbolic tangent."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "tanh",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["tanh"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "tanh(x) elementwise.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
