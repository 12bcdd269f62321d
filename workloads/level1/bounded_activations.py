# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Bounded activations (softsign, tanh, x*sigmoid(x)) of several operands: positive denominators."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
DIM = 32

STEPTP = {
    "name": "bounded_activations",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["softsign", "tanh", "sigmoid", "mul", "sub", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 16384},
    "description": ("softsign(v), tanh(v) and v*sigmoid(v) of x, x-y, 2x and x*y, summed: x/(1+|x|), "
                    "1-2/(exp(2x)+1) and x/(1+exp(-x)) are fractions over provably positive denominators "
                    "(expand_cancellation sites, and cancellation sites one step later)."),
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        total = torch.zeros_like(x)
        for v in (x, x - y, 2 * x, x * y):
            total = total + F.softsign(v) + torch.tanh(v) + v * torch.sigmoid(v)
        return total


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
