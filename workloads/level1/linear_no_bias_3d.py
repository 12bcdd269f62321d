# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Bias-free F.linear applied to a (batch, seq, features) tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
IN_FEATURES = 64
OUT_FEATURES = 80

STEPTP = {
    "name": "linear_no_bias_3d",
    "level": 1,
    "tags": ["linear", "gemm", "parameter"],
    "ops": ["linear"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 512, "IN_FEATURES": 4096, "OUT_FEATURES": 11008},
    "description": "Functional linear layer without bias over the last axis of a 3-D activation.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features**0.5)

    def forward(self, x):
        return F.linear(x, self.weight)


def get_inputs():
    return [torch.randn(BATCH, SEQ, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
