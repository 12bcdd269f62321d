# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Log-softmax over a middle axis."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
CLASSES = 32
LENGTH = 32

STEPTP = {
    "name": "log_softmax",
    "level": 1,
    "tags": ["softmax", "reduction"],
    "ops": ["log_softmax"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CLASSES": 1000, "LENGTH": 1024},
    "description": "F.log_softmax(x, dim=1) on a (BATCH, CLASSES, LENGTH) tensor: reduction over a "
    "non-innermost axis.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, CLASSES, LENGTH)]


def get_init_inputs():
    return []
