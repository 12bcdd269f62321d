# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, sigmoid, row sum, then log-sum-exp over the batch."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_sigmoid_sum_logsumexp",
    "level": 2,
    "tags": ["gemm", "epilogue", "reduction"],
    "ops": ["linear", "sigmoid", "sum", "logsumexp"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> sigmoid -> sum(dim=1) -> logsumexp(dim=0): a scalar.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = torch.sigmoid(y).sum(dim=1)
        y = torch.logsumexp(y, dim=0)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
