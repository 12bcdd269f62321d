# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Huber loss with delta, without reduction."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64
DELTA = 1.0

STEPTP = {
    "name": "huber_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["huber_loss"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "Elementwise Huber loss (reduction='none').",
}


class Model(nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.delta = delta

    def forward(self, pred, target):
        return F.huber_loss(pred, target, reduction="none", delta=self.delta)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DELTA]
