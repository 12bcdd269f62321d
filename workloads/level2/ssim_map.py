# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""The SSIM map of two images: one Gaussian window (padded, depthwise) over x, y, x*x, y*y and x*y."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1
CHANNELS = 2
HEIGHT = 10
WIDTH = 10

STEPTP = {
    "name": "ssim_map",
    "level": 2,
    "tags": ["conv", "conv2d", "depthwise", "padding", "image_quality"],
    "ops": ["conv2d", "mul", "add", "sub", "div"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "CHANNELS": 3, "HEIGHT": 256, "WIDTH": 256},
    "description": "SSIM with a 3x3 Gaussian window (padding=1, groups=channels): five look-alike padded "
    "convolutions of different inputs with the same weights.",
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.channels = channels
        g = torch.tensor([0.25, 0.5, 0.25])
        self.register_buffer("window", torch.outer(g, g).expand(channels, 1, 3, 3).contiguous())

    def forward(self, x, y):
        def blur(t):
            return F.conv2d(t, self.window, padding=1, groups=self.channels)

        mx, my = blur(x), blur(y)
        sxx = blur(x * x) - mx * mx
        syy = blur(y * y) - my * my
        sxy = blur(x * y) - mx * my
        c1, c2 = 0.0001, 0.0009
        return ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH), torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
