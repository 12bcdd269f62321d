# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A Siamese pair: one padded 1-D convolution (shared weights) applied to two inputs, then compared."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
LENGTH = 16

STEPTP = {
    "name": "siamese_conv1d",
    "level": 2,
    "tags": ["conv", "conv1d", "padding", "siamese", "shared_weights"],
    "ops": ["conv1d", "sub", "abs"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "IN_CHANNELS": 64, "OUT_CHANNELS": 128, "LENGTH": 4096},
    "description": "Conv1d(k=5, padding=2, no bias) shared by two inputs -> |f(x1) - f(x2)|: two look-alike "
    "padded convolutions on different inputs.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 5, padding=2, bias=False)

    def forward(self, x1, x2):
        return torch.abs(self.conv(x1) - self.conv(x2))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH), torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
