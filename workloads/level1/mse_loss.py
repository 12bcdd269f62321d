# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Mean squared error between predictions and targets."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64

STEPTP = {
    "name": "mse_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["mse_loss"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "F.mse_loss with mean reduction: a scalar.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.mse_loss(pred, target)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
