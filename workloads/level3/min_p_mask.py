# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Min-p sampling mask: tokens whose probability is below min_p times the top probability are removed."""

import torch
import torch.nn as nn

BATCH = 4
VOCAB = 64
MIN_P = 0.1

STEPTP = {
    "name": "min_p_mask",
    "level": 3,
    "tags": ["llm", "sampling", "mask", "reduction"],
    "ops": ["softmax", "amax", "mul", "lt", "masked_fill"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 256, "VOCAB": 128256},
    "description": "probs = softmax(logits); logits where probs < MIN_P * max(probs) set to -inf.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        probs = torch.softmax(logits, dim=-1)
        threshold = probs.amax(dim=-1, keepdim=True) * MIN_P
        return logits.masked_fill(probs < threshold, float("-inf"))


def get_inputs():
    return [torch.randn(BATCH, VOCAB)]


def get_init_inputs():
    return []
