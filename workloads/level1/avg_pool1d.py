# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""1-D average pooling with padding counted in the divisor."""

import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 8
LENGTH = 64

STEPTP = {
    "name": "avg_pool1d",
    "level": 1,
    "tags": ["pooling", "avg_pool"],
    "ops": ["avg_pool1d"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 32, "LENGTH": 131072},
    "description": "nn.AvgPool1d(kernel_size=4, stride=2, padding=1) with the default "
    "count_include_pad=True.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=4, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return []
