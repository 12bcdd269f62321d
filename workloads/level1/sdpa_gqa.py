# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Grouped-query scaled dot-product attention (fewer key/value heads than query heads)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 4
SEQ = 16
HEAD_DIM = 32
KV_HEADS = 2

STEPTP = {
    "name": "sdpa_gqa",
    "level": 1,
    "tags": ["attention", "gqa"],
    "ops": ["scaled_dot_product_attention"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "HEADS": 32, "SEQ": 2048, "HEAD_DIM": 128, "KV_HEADS": 8},
    "description": "enable_gqa=True: each group of HEADS // KV_HEADS query heads shares one key/value head.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    k = torch.randn(BATCH, KV_HEADS, SEQ, HEAD_DIM)
    v = torch.randn(BATCH, KV_HEADS, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
