# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Top-p (nucleus) sampling mask, static form: sort, softmax, cumulative sum, drop the tail past p
(always keeping the most likely token), scatter the mask back to vocabulary order (HF TopPLogitsWarper)."""

import torch
import torch.nn as nn

BATCH = 4
VOCAB = 64
TOP_P = 0.9

STEPTP = {
    "name": "top_p_mask",
    "level": 3,
    "tags": ["llm", "sampling", "sort", "cumsum", "scatter", "mask"],
    "ops": ["sort", "softmax", "cumsum", "le", "scatter", "masked_fill"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 256, "VOCAB": 128256},
    "description": "Stable ascending sort, cumsum of softmax, remove where cumsum <= 1 - p (last kept), "
    "scatter back, "
    "masked_fill -inf.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        sorted_logits, sorted_index = torch.sort(logits, dim=-1, stable=True)
        cumulative = sorted_logits.float().softmax(dim=-1).cumsum(dim=-1)  # samplers sum in f32
        remove = cumulative <= 1 - TOP_P
        remove[..., -1:] = False
        mask = remove.scatter(1, sorted_index, remove)
        return logits.masked_fill(mask, float("-inf"))


def get_inputs():
    return [torch.randn(BATCH, VOCAB)]


def get_init_inputs():
    return []
