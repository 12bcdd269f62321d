# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""minGPT-style causal multi-head self-attention with a registered lower-triangular mask."""

import math

import torch
import torch.nn as nn

BATCH = 2
SEQ = 16
EMBED = 64
HEADS = 4

STEPTP = {
    "name": "mha_causal",
    "level": 2,
    "tags": ["attention", "mha", "causal", "buffer"],
    "ops": ["linear", "view", "transpose", "matmul", "mul", "masked_fill", "softmax", "contiguous"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "HEADS": 32},
    "description": "Scores masked with masked_fill(mask == 0, -inf) from a tril buffer before the softmax.",
}


class Model(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.heads = heads
        self.kv_heads = heads
        self.head_dim = embed // heads
        self.q_proj = nn.Linear(embed, embed)
        self.k_proj = nn.Linear(embed, self.kv_heads * self.head_dim)
        self.v_proj = nn.Linear(embed, self.kv_heads * self.head_dim)
        self.out_proj = nn.Linear(embed, embed)
        self.register_buffer("causal_mask", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ))

    def forward(self, x):
        q = self.q_proj(x).view(BATCH, SEQ, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(BATCH, SEQ, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(BATCH, SEQ, self.kv_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        scores = scores.masked_fill(self.causal_mask == 0, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        y = torch.matmul(probs, v)
        y = y.transpose(1, 2).contiguous().view(BATCH, SEQ, EMBED)
        y = self.out_proj(y)
        return y


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS]
