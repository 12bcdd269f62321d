# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal scaled dot-product attention of one head: the smallest streaming-softmax (flash-attention) site."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1
HEADS = 1
SEQ = 16
HEAD_DIM = 16

STEPTP = {
    "name": "sdpa_causal_single_head",
    "level": 1,
    "tags": ["attention", "causal", "streaming"],
    "ops": ["scaled_dot_product_attention"],
    "license": "Apache-2.0",
    "paper_shapes": {"SEQ": 2048, "HEAD_DIM": 128},
    "description": ("One head, is_causal=True: small enough (about 10k statement executions) for "
                    "interpreter-checked property tests of the streaming strategies."),
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
