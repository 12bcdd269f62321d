# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Vision-transformer patch embedding: strided conv, flatten, class token, positions."""

import torch
import torch.nn as nn

BATCH = 2
CHANNELS = 3
IMAGE = 16
PATCH = 4
EMBED = 32

STEPTP = {
    "name": "vit_patch_embedding",
    "level": 2,
    "tags": ["conv", "conv2d", "stride", "layout", "parameter"],
    "ops": ["conv2d", "flatten", "transpose", "expand", "cat", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 32, "CHANNELS": 3, "IMAGE": 224, "PATCH": 16, "EMBED": 768},
    "description": "Conv2d(kernel=stride=PATCH) -> flatten -> transpose -> prepend an expanded "
    "class token -> + positional embedding parameter.",
}


class Model(nn.Module):
    def __init__(self, channels, image, patch, embed):
        super().__init__()
        self.proj = nn.Conv2d(channels, embed, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, embed))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, (image // patch) ** 2 + 1, embed))

    def forward(self, x):
        tokens = self.proj(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(BATCH, -1, -1)
        return torch.cat((cls, tokens), dim=1) + self.pos_embed


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [CHANNELS, IMAGE, PATCH, EMBED]
