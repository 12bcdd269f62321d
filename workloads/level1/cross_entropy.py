# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Cross-entropy between logits and integer class targets."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CLASSES = 10

STEPTP = {
    "name": "cross_entropy",
    "level": 1,
    "tags": ["loss", "reduction", "index"],
    "ops": ["cross_entropy"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 4096, "CLASSES": 1000},
    "description": "Softmax cross-entropy with mean reduction over the batch; targets are int64 "
    "class indices.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return []
