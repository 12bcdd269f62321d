# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Batch normalisation in inference mode, using stored running statistics."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
CHANNELS = 8
HEIGHT = 16
WIDTH = 16
EPS = 1e-05

STEPTP = {
    "name": "batch_norm_eval",
    "level": 1,
    "tags": ["normalization", "batch_norm", "eval", "buffer"],
    "ops": ["batch_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 256, "WIDTH": 256},
    "description": "F.batch_norm(training=False) with running_mean/running_var buffers holding "
    "non-trivial values.",
}


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.register_buffer("running_mean", 0.5 * torch.randn(channels))
        self.register_buffer("running_var", 0.5 + torch.rand(channels))
        self.eps = eps

    def forward(self, x):
        return F.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias, training=False, eps=self.eps
        )


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EPS]
