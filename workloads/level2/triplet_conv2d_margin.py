# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A triplet-margin loss over one shared padded 2-D convolution of anchor, positive and negative."""

import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 1
OUT_CHANNELS = 2
HEIGHT = 6
WIDTH = 6
MARGIN = 1.0

STEPTP = {
    "name": "triplet_conv2d_margin",
    "level": 2,
    "tags": ["conv", "conv2d", "padding", "siamese", "shared_weights", "loss"],
    "ops": ["conv2d", "sub", "pow", "sum", "relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "IN_CHANNELS": 3, "OUT_CHANNELS": 64, "HEIGHT": 64, "WIDTH": 64},
    "description": "Conv2d(3x3, padding=1, no bias) shared by anchor, positive and negative -> "
    "relu(|f(a)-f(p)|^2 - |f(a)-f(n)|^2 + margin) per sample: three look-alike padded convolutions.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)

    def forward(self, anchor, positive, negative):
        a, p, n = self.conv(anchor), self.conv(positive), self.conv(negative)
        near = ((a - p) ** 2).sum(dim=(1, 2, 3))
        far = ((a - n) ** 2).sum(dim=(1, 2, 3))
        return torch.relu(near - far + MARGIN)


def get_inputs():
    shape = (BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
