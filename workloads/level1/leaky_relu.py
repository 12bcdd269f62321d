# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Leaky ReLU with a configurable negative slope."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256
NEGATIVE_SLOPE = 0.01

STEPTP = {
    "name": "leaky_relu",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["leaky_relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "x if x >= 0 else slope * x.",
}


class Model(nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [NEGATIVE_SLOPE]
