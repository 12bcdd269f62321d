# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""ResNet basic block: conv-bn-relu-conv-bn plus identity, then ReLU (eval batch norm)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
CHANNELS = 8
HEIGHT = 12
WIDTH = 12

STEPTP = {
    "name": "resnet_basic_block",
    "level": 2,
    "tags": ["conv", "conv2d", "residual", "normalization", "batch_norm", "eval", "buffer"],
    "ops": ["conv2d", "batch_norm", "relu", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 32, "CHANNELS": 64, "HEIGHT": 56, "WIDTH": 56},
    "description": "Two 3x3 same-padded convolutions without bias, each followed by batch norm "
    "with running statistics.",
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        for i in (1, 2):
            self.register_buffer(f"mean{i}", 0.1 * torch.randn(channels))
            self.register_buffer(f"var{i}", 0.5 + torch.rand(channels))
            self.register_parameter(f"gamma{i}", nn.Parameter(1.0 + 0.1 * torch.randn(channels)))
            self.register_parameter(f"beta{i}", nn.Parameter(0.1 * torch.randn(channels)))

    def forward(self, x):
        y = self.conv1(x)
        y = torch.relu(F.batch_norm(y, self.mean1, self.var1, self.gamma1, self.beta1, training=False))
        y = self.conv2(y)
        y = F.batch_norm(y, self.mean2, self.var2, self.gamma2, self.beta2, training=False)
        return torch.relu(y + x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
