# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""RMS normalisation with the built-in nn.RMSNorm module over two trailing axes."""

import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 8
LENGTH = 32
EPS = 1e-05

STEPTP = {
    "name": "rms_norm_module",
    "level": 1,
    "tags": ["normalization", "rms_norm"],
    "ops": ["rms_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "LENGTH": 4096},
    "description": "nn.RMSNorm((CHANNELS, LENGTH)) with an elementwise affine weight.",
}


class Model(nn.Module):
    def __init__(self, channels, length, eps):
        super().__init__()
        self.norm = nn.RMSNorm((channels, length), eps=eps)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, LENGTH, EPS]
