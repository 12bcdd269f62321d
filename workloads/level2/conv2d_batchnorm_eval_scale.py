# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Convolution, inference-mode batch norm, scaling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
IN_CHANNELS = 4
OUT_CHANNELS = 8
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
SCALE = 2.0

STEPTP = {
    "name": "conv2d_batchnorm_eval_scale",
    "level": 2,
    "tags": ["conv", "conv2d", "epilogue", "normalization", "batch_norm", "eval", "buffer"],
    "ops": ["conv2d", "batch_norm", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 128,
        "IN_CHANNELS": 3,
        "OUT_CHANNELS": 16,
        "HEIGHT": 256,
        "WIDTH": 256,
        "KERNEL_SIZE": 3,
    },
    "description": "Conv2d -> BatchNorm2d with running statistics (eval) -> * SCALE.",
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale = scale
        self.register_buffer("running_mean", 0.1 * torch.randn(out_channels))
        self.register_buffer("running_var", 0.5 + torch.rand(out_channels))
        self.bn_weight = nn.Parameter(1.0 + 0.1 * torch.randn(out_channels))
        self.bn_bias = nn.Parameter(0.1 * torch.randn(out_channels))

    def forward(self, x):
        y = self.conv(x)
        y = F.batch_norm(y, self.running_mean, self.running_var, self.bn_weight, self.bn_bias, training=False)
        y = y * self.scale
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, SCALE]
