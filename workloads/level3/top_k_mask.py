# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Top-k sampling mask: logits below the k-th largest of their row become -inf (HF TopKLogitsWarper)."""

import torch
import torch.nn as nn

BATCH = 4
VOCAB = 64
TOP_K = 8

STEPTP = {
    "name": "top_k_mask",
    "level": 3,
    "tags": ["llm", "sampling", "topk", "mask"],
    "ops": ["topk", "getitem", "lt", "masked_fill"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 256, "VOCAB": 128256, "TOP_K": 50},
    "description": "kth = topk(logits, K).values[..., -1:]; logits where logits < kth set to -inf.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        kth = torch.topk(logits, TOP_K, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))


def get_inputs():
    return [torch.randn(BATCH, VOCAB)]


def get_init_inputs():
    return []
