# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Mean absolute error, summed per sample then averaged (explicit form and F.l1_loss)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64

STEPTP = {
    "name": "l1_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["l1_loss", "abs", "mean", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "Two spellings of the L1 loss, added.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.l1_loss(pred, target, reduction="sum") / BATCH + torch.mean(torch.abs(pred - target))


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
