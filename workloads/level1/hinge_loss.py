# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Hinge loss for +/-1 labels."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 64

STEPTP = {
    "name": "hinge_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["mul", "rsub", "clamp", "mean"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "mean(max(0, 1 - y * f(x))) with labels built from a sign of a random tensor.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return torch.mean(torch.clamp(1.0 - pred * target, min=0.0))


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.where(torch.randn(BATCH, DIM) > 0, 1.0, -1.0)]


def get_init_inputs():
    return []
