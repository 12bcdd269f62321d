# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Softsign: x / (1 + |x|)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "softsign",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["softsign"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "x / (1 + |x|) elementwise.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.softsign(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
