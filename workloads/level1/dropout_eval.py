# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Dropout with p > 0 evaluated in inference mode (the identity), then scaled."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256
P = 0.3

STEPTP = {
    "name": "dropout_eval",
    "level": 1,
    "tags": ["dropout", "eval", "elementwise"],
    "ops": ["dropout", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "F.dropout(x, p=P, training=False) * 2: deterministic whatever the module's mode.",
}


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, p=self.p, training=False) * 2.0


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [P]
