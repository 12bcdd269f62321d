# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Hard swish: x * relu6(x + 3) / 6."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "hardswish",
    "level": 1,
    "tags": ["activation", "elementwise"],
    "ops": ["hardswish"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "The MobileNetV3 activation.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
