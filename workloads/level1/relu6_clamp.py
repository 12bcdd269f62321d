# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""ReLU6 via nn.ReLU6 next to an explicit two-sided clamp."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256
LOW = -1.0
HIGH = 2.5

STEPTP = {
    "name": "relu6_clamp",
    "level": 1,
    "tags": ["activation", "elementwise", "clamp"],
    "ops": ["hardtanh", "clamp", "sub"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "nn.ReLU6 (hardtanh(x, 0, 6)) minus torch.clamp(x, LOW, HIGH).",
}


class Model(nn.Module):
    def __init__(self, low, high):
        super().__init__()
        self.act = nn.ReLU6()
        self.low = low
        self.high = high

    def forward(self, x):
        return self.act(x * 4.0) - torch.clamp(x, min=self.low, max=self.high)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [LOW, HIGH]
