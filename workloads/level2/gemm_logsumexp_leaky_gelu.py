# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, log-sum-exp, two leaky ReLUs, two GELUs."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_logsumexp_leaky_gelu",
    "level": 2,
    "tags": ["gemm", "epilogue", "reduction"],
    "ops": ["linear", "logsumexp", "leaky_relu", "gelu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> logsumexp(dim=1) -> LeakyReLU x2 -> GELU x2.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = torch.logsumexp(y, dim=1, keepdim=True)
        y = F.leaky_relu(y, 0.01)
        y = F.leaky_relu(y, 0.01)
        y = F.gelu(y)
        y = F.gelu(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
