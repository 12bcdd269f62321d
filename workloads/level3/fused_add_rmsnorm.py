# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Residual add fused with RMSNorm, returning both the new residual and the normalised hidden state
(vLLM's fused_add_rms_norm)."""

import torch
import torch.nn as nn

TOKENS = 8
HIDDEN = 64
EPS = 1e-5

STEPTP = {
    "name": "fused_add_rmsnorm",
    "level": 3,
    "tags": ["llm", "rms_norm", "residual", "parameter"],
    "ops": ["add", "pow", "mean", "rsqrt", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 8192, "HIDDEN": 8192},
    "description": "residual = x + residual; out = residual * rsqrt(mean(residual^2) + eps) * weight.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(HIDDEN))

    def forward(self, x, residual):
        residual = x + residual
        out = residual * torch.rsqrt(residual.pow(2).mean(-1, keepdim=True) + EPS) * self.weight
        return out, residual


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN), torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return []
