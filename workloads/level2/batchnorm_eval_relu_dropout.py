# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Inference batch norm, ReLU and eval-mode dropout on a feature map."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
CHANNELS = 8
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "batchnorm_eval_relu_dropout",
    "level": 2,
    "tags": ["normalization", "batch_norm", "eval", "dropout", "buffer"],
    "ops": ["batch_norm", "relu", "dropout"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "CHANNELS": 256, "HEIGHT": 56, "WIDTH": 56},
    "description": "F.batch_norm(training=False) with running buffers -> ReLU -> F.dropout(p=0.2, "
    "training=False).",
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.register_buffer("running_mean", 0.2 * torch.randn(channels))
        self.register_buffer("running_var", 0.5 + torch.rand(channels))

    def forward(self, x):
        y = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, training=False)
        return F.dropout(torch.relu(y), p=0.2, training=False)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
