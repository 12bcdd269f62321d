# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal grouped-query attention through scaled_dot_product_attention(enable_gqa=True)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
EMBED = 64
HEADS = 4
KV_HEADS = 2

STEPTP = {
    "name": "gqa_sdpa_causal",
    "level": 2,
    "tags": ["attention", "gqa", "causal"],
    "ops": ["linear", "view", "transpose", "scaled_dot_product_attention", "contiguous"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "HEADS": 32, "KV_HEADS": 8},
    "description": "Projections plus is_causal=True, enable_gqa=True attention.",
}


class Model(nn.Module):
    def __init__(self, embed, heads, kv_heads):
        super().__init__()
        self.heads = heads
        self.kv_heads = kv_heads
        self.head_dim = embed // heads
        self.q_proj = nn.Linear(embed, embed)
        self.k_proj = nn.Linear(embed, self.kv_heads * self.head_dim)
        self.v_proj = nn.Linear(embed, self.kv_heads * self.head_dim)
        self.out_proj = nn.Linear(embed, embed)

    def forward(self, x):
        q = self.q_proj(x).view(BATCH, SEQ, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(BATCH, SEQ, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(BATCH, SEQ, self.kv_heads, self.head_dim).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        y = y.transpose(1, 2).contiguous().view(BATCH, SEQ, EMBED)
        y = self.out_proj(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS, KV_HEADS]
