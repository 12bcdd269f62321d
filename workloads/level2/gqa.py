# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Grouped-query attention: KV_HEADS key/value heads shared by groups of query heads."""

import math

import torch
import torch.nn as nn

BATCH = 2
SEQ = 16
EMBED = 64
HEADS = 4
KV_HEADS = 2

STEPTP = {
    "name": "gqa",
    "level": 2,
    "tags": ["attention", "gqa"],
    "ops": [
        "linear",
        "view",
        "transpose",
        "unsqueeze",
        "expand",
        "reshape",
        "matmul",
        "mul",
        "softmax",
        "contiguous",
    ],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "HEADS": 32, "KV_HEADS": 8},
    "description": "K and V heads expanded with unsqueeze/expand/reshape to match the query heads.",
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
        # Share each key/value head across its group of query heads.
        group = self.heads // self.kv_heads
        k = k.unsqueeze(2).expand(BATCH, self.kv_heads, group, SEQ, self.head_dim)
        k = k.reshape(BATCH, self.heads, SEQ, self.head_dim)
        v = v.unsqueeze(2).expand(BATCH, self.kv_heads, group, SEQ, self.head_dim)
        v = v.reshape(BATCH, self.heads, SEQ, self.head_dim)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        probs = torch.softmax(scores, dim=-1)
        y = torch.matmul(probs, v)
        y = y.transpose(1, 2).contiguous().view(BATCH, SEQ, EMBED)
        y = self.out_proj(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS, KV_HEADS]
