# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Numerically stable log-sum-exp over one axis."""

import torch
import torch.nn as nn

BATCH = 8
DIM1 = 32
DIM2 = 48
DIM = 1

STEPTP = {
    "name": "logsumexp",
    "level": 1,
    "tags": ["reduction"],
    "ops": ["logsumexp"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM1": 256, "DIM2": 256},
    "description": "log(sum(exp(x))) over dim 1.",
}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.logsumexp(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [DIM]
