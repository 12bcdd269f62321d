# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Layer normalisation over the last two dimensions with an affine transform."""

import torch
import torch.nn as nn

BATCH = 4
SEQ = 16
HIDDEN = 64

STEPTP = {
    "name": "layer_norm",
    "level": 1,
    "tags": ["normalization", "layer_norm"],
    "ops": ["layer_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 64, "HIDDEN": 4096},
    "size_ranges": {"BATCH": [1, 8], "SEQ": [8, 32, 8], "HIDDEN": [32, 128, 32]},
    "description": "nn.LayerNorm((SEQ, HIDDEN)): statistics over a two-axis normalised shape.",
}


class Model(nn.Module):
    def __init__(self, seq, hidden):
        super().__init__()
        self.norm = nn.LayerNorm((seq, hidden))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [SEQ, HIDDEN]
