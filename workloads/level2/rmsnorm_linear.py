# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""nn.RMSNorm followed by a bias-free linear projection."""

import torch
import torch.nn as nn

BATCH = 4
SEQ = 16
EMBED = 64
OUT_FEATURES = 64

STEPTP = {
    "name": "rmsnorm_linear",
    "level": 2,
    "tags": ["normalization", "rms_norm", "gemm"],
    "ops": ["rms_norm", "linear"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "OUT_FEATURES": 4096},
    "description": "nn.RMSNorm(EMBED, eps=1e-6) -> nn.Linear(EMBED, OUT_FEATURES, bias=False).",
}


class Model(nn.Module):
    def __init__(self, embed, out_features):
        super().__init__()
        self.norm = nn.RMSNorm(embed, eps=1e-6)
        self.proj = nn.Linear(embed, out_features, bias=False)

    def forward(self, x):
        return self.proj(self.norm(x))


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, OUT_FEATURES]
