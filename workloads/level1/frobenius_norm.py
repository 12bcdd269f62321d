# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Division by the Frobenius norm of the whole tensor."""

import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 8
HEIGHT = 16
WIDTH = 16

STEPTP = {
    "name": "frobenius_norm",
    "level": 1,
    "tags": ["reduction", "norm"],
    "ops": ["norm", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 256, "WIDTH": 256},
    "description": "x / torch.norm(x, p='fro'): one global reduction followed by an elementwise division.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
