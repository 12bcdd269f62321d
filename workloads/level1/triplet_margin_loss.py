# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Triplet margin loss on anchor, positive and negative embeddings."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64
MARGIN = 1.0

STEPTP = {
    "name": "triplet_margin_loss",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["triplet_margin_loss"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "mean(max(d(a, p) - d(a, n) + margin, 0)) with the L2 pairwise distance.",
}


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [MARGIN]
