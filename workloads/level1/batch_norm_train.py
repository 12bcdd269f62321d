# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Batch normalisation with statistics of the current batch (training mode)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
CHANNELS = 8
HEIGHT = 16
WIDTH = 16
EPS = 1e-05

STEPTP = {
    "name": "batch_norm_train",
    "level": 1,
    "tags": ["normalization", "batch_norm", "train"],
    "ops": ["batch_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 256, "WIDTH": 256},
    "description": "F.batch_norm(training=True) without running statistics: mean and biased "
    "variance over (N, H, W); the result does not depend on the module's train/eval "
    "flag.",
}


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.eps = eps

    def forward(self, x):
        return F.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=self.eps)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EPS]
