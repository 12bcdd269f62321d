# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Hard sigmoid: relu6(x + 3) / 6."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "hardsigmoid",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["hardsigmoid"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "Piecewise-linear sigmoid approximation.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardsigmoid(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
