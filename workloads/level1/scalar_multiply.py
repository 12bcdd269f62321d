# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix times a Python scalar."""

import torch
import torch.nn as nn

M = 128
N = 128
SCALE = 3.5

STEPTP = {
    "name": "scalar_multiply",
    "level": 1,
    "tags": ["elementwise", "scalar"],
    "ops": ["mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 16384, "N": 4096},
    "description": "Elementwise multiplication by a constant passed to the constructor.",
}


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a):
        return a * self.scale


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return [SCALE]
