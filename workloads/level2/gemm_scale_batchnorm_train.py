# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM, per-feature scale, training-mode batch norm."""

import torch
import torch.nn as nn

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_scale_batchnorm_train",
    "level": 2,
    "tags": ["gemm", "epilogue", "normalization", "batch_norm", "train", "parameter"],
    "ops": ["linear", "mul", "batch_norm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> * scale parameter -> BatchNorm1d with batch statistics "
    "(track_running_stats=False).",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(1.0 + 0.1 * torch.randn(out_features))
        self.bn = nn.BatchNorm1d(out_features, track_running_stats=False)

    def forward(self, x):
        y = self.fc(x)
        y = self.bn(y * self.scale)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
