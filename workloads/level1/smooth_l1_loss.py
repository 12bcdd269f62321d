# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Smooth L1 (Huber-like) loss with beta."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64
BETA = 0.5

STEPTP = {
    "name": "smooth_l1_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["smooth_l1_loss"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "Quadratic below beta, linear above it, averaged.",
}


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target, beta=self.beta)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [BETA]
