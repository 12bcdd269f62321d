# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Exact GELU, x * Phi(x), with the error function."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "gelu",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "0.5 * x * (1 + erf(x / sqrt(2))).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
