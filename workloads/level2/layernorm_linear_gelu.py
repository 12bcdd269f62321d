# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""LayerNorm, linear layer, GELU (a pre-norm MLP entry)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
EMBED = 64
HIDDEN = 128

STEPTP = {
    "name": "layernorm_linear_gelu",
    "level": 2,
    "tags": ["normalization", "layer_norm", "gemm", "epilogue"],
    "ops": ["layer_norm", "linear", "gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "HIDDEN": 16384},
    "description": "nn.LayerNorm(EMBED) -> nn.Linear(EMBED, HIDDEN) -> GELU.",
}


class Model(nn.Module):
    def __init__(self, embed, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(embed)
        self.fc = nn.Linear(embed, hidden)

    def forward(self, x):
        return F.gelu(self.fc(self.norm(x)))


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HIDDEN]
