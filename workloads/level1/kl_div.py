# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""KL divergence between two distributions given as log-probs and probs."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 64

STEPTP = {
    "name": "kl_div",
    "level": 1,
    "tags": ["loss", "reduction"],
    "ops": ["log_softmax", "softmax", "kl_div"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 4096},
    "description": "F.kl_div(reduction='batchmean') of two softmax-normalised inputs.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target_logits):
        return F.kl_div(
            torch.log_softmax(logits, dim=-1), torch.softmax(target_logits, dim=-1), reduction="batchmean"
        )


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
