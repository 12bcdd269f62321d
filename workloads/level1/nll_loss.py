# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Negative log-likelihood of log-probabilities with per-class weights."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CLASSES = 10

STEPTP = {
    "name": "nll_loss",
    "level": 1,
    "tags": ["loss", "reduction", "index", "buffer"],
    "ops": ["log_softmax", "nll_loss"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 4096, "CLASSES": 1000},
    "description": "F.nll_loss over log_softmax output with a weight buffer; the weighted mean "
    "divides by the picked weights.",
}


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.register_buffer("class_weight", 0.5 + torch.arange(classes, dtype=torch.float32) / classes)

    def forward(self, logits, target):
        return F.nll_loss(F.log_softmax(logits, dim=1), target, weight=self.class_weight)


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return [CLASSES]
