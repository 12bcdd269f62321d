# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Softplus with beta and threshold."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256
BETA = 2.0
THRESHOLD = 5.0

STEPTP = {
    "name": "softplus",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["softplus"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "log(1 + exp(beta x)) / beta, linear above the threshold.",
}


class Model(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [BETA, THRESHOLD]
