# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""ELU activation with alpha."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256
ALPHA = 1.0

STEPTP = {
    "name": "elu",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["elu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "x if x > 0 else alpha * (exp(x) - 1).",
}


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [ALPHA]
