# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Classifier head: linear layer, then cross-entropy with label smoothing."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_FEATURES = 64
CLASSES = 16

STEPTP = {
    "name": "linear_cross_entropy",
    "level": 2,
    "tags": ["gemm", "loss", "index"],
    "ops": ["linear", "cross_entropy"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 4096, "IN_FEATURES": 4096, "CLASSES": 32000},
    "description": "F.cross_entropy(linear(x), target, label_smoothing=0.1) on the logits.",
}


class Model(nn.Module):
    def __init__(self, in_features, classes):
        super().__init__()
        self.fc = nn.Linear(in_features, classes)

    def forward(self, x, target):
        return F.cross_entropy(self.fc(x), target, label_smoothing=0.1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return [IN_FEATURES, CLASSES]
