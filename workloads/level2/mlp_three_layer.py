# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Three-layer perceptron with GELU and SiLU activations."""

import torch
import torch.nn as nn

BATCH = 16
IN_FEATURES = 64
HIDDEN = 96
OUT_FEATURES = 10

STEPTP = {
    "name": "mlp_three_layer",
    "level": 2,
    "tags": ["gemm", "mlp"],
    "ops": ["linear", "gelu", "silu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "HIDDEN": 8192, "OUT_FEATURES": 1000},
    "description": "nn.Sequential(Linear, GELU, Linear, SiLU, Linear).",
}


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.SiLU(),
            nn.Linear(hidden, out_features),
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES]
