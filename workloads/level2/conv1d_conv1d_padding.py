# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Two padded 1-D convolutions in sequence with a ReLU between them."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
HIDDEN = 8
OUT_CHANNELS = 8
LENGTH = 64

STEPTP = {
    "name": "conv1d_conv1d_padding",
    "level": 2,
    "tags": ["conv", "conv1d", "padding"],
    "ops": ["conv1d", "relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "IN_CHANNELS": 64, "HIDDEN": 128, "OUT_CHANNELS": 128, "LENGTH": 16384},
    "description": "Conv1d(k=5, padding=2) -> ReLU -> Conv1d(k=3, padding=1): lengths preserved.",
}


class Model(nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = nn.Conv1d(in_channels, hidden, 5, padding=2)
        self.conv2 = nn.Conv1d(hidden, out_channels, 3, padding=1)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv1(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, HIDDEN, OUT_CHANNELS]
