# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Reshape, view, permute, transpose, contiguous and flatten in one chain."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 8
HEIGHT = 8
WIDTH = 12

STEPTP = {
    "name": "view_permute",
    "level": 1,
    "tags": ["layout"],
    "ops": ["view", "permute", "transpose", "contiguous", "reshape", "flatten", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 128, "WIDTH": 128},
    "description": "Pure data movement (NCHW -> NHWC -> blocks) followed by one add so the result "
    "is not an alias.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        nhwc = x.permute(0, 2, 3, 1).contiguous()
        blocks = nhwc.view(BATCH, HEIGHT * WIDTH, CHANNELS).transpose(1, 2)
        flat = blocks.reshape(BATCH, CHANNELS, HEIGHT, WIDTH).flatten(1)
        return flat + x.flatten(1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
