# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Post-norm residual: LayerNorm(x + linear(x)) scaled by a learnable gain."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 16
EMBED = 64

STEPTP = {
    "name": "layernorm_residual_scale",
    "level": 2,
    "tags": ["normalization", "layer_norm", "gemm", "residual", "parameter"],
    "ops": ["linear", "add", "layer_norm", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 512, "EMBED": 1024},
    "description": "F.layer_norm over the last axis without affine, followed by a per-feature gain "
    "parameter.",
}


class Model(nn.Module):
    def __init__(self, embed):
        super().__init__()
        self.fc = nn.Linear(embed, embed)
        self.gain = nn.Parameter(1.0 + 0.1 * torch.randn(embed))

    def forward(self, x):
        return F.layer_norm(x + self.fc(x), (EMBED,)) * self.gain


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED]
