# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""1-D max pooling with stride, padding and dilation."""

import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 8
LENGTH = 64

STEPTP = {
    "name": "max_pool1d",
    "level": 1,
    "tags": ["pooling", "max_pool"],
    "ops": ["max_pool1d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "LENGTH": 65536},
    "description": "nn.MaxPool1d(kernel_size=4, stride=2, padding=1, dilation=2); padding acts as -inf.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=4, stride=2, padding=1, dilation=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return []
