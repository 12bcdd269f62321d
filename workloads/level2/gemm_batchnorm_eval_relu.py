# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""GEMM followed by inference-mode batch norm and ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 128
OUT_FEATURES = 96

STEPTP = {
    "name": "gemm_batchnorm_eval_relu",
    "level": 2,
    "tags": ["gemm", "epilogue", "normalization", "batch_norm", "buffer", "eval"],
    "ops": ["linear", "batch_norm", "relu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    "description": "Linear -> BatchNorm1d in eval mode (running statistics as buffers) -> ReLU.",
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.register_buffer("running_mean", 0.1 * torch.randn(out_features))
        self.register_buffer("running_var", 0.5 + torch.rand(out_features))
        self.bn_weight = nn.Parameter(1.0 + 0.1 * torch.randn(out_features))
        self.bn_bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x):
        y = self.fc(x)
        y = F.batch_norm(y, self.running_mean, self.running_var, self.bn_weight, self.bn_bias, training=False)
        y = torch.relu(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
