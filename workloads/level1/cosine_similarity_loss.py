# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""1 - cosine similarity, averaged over the batch."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64

STEPTP = {
    "name": "cosine_similarity_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["cosine_similarity", "rsub", "mean"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "F.cosine_similarity along the feature axis turned into a loss.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return torch.mean(1.0 - F.cosine_similarity(pred, target, dim=1))


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
