# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Attention logits as einsum('bhqd,bhkd->bhqk') (contraction over the head dim)."""

import torch
import torch.nn as nn

BATCH = 2
HEADS = 4
SEQ_Q = 16
SEQ_K = 24
HEAD_DIM = 32

STEPTP = {
    "name": "einsum_attention_scores",
    "level": 1,
    "tags": ["matmul", "einsum", "attention"],
    "ops": ["einsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "HEADS": 32, "SEQ_Q": 1024, "SEQ_K": 1024, "HEAD_DIM": 128},
    "description": "Query-key dot products for every batch, head, query and key position.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ_Q, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ_K, HEAD_DIM)]


def get_init_inputs():
    return []
