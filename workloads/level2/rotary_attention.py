# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal attention with rotary position embeddings (RoPE) applied to queries and keys."""

import math

import torch
import torch.nn as nn

BATCH = 2
SEQ = 16
EMBED = 64
HEADS = 4

STEPTP = {
    "name": "rotary_attention",
    "level": 2,
    "tags": ["attention", "mha", "causal", "rope", "buffer", "slicing"],
    "ops": [
        "linear",
        "chunk",
        "view",
        "transpose",
        "getitem",
        "neg",
        "cat",
        "mul",
        "add",
        "matmul",
        "masked_fill",
        "softmax",
        "contiguous",
    ],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 4096, "EMBED": 4096, "HEADS": 32},
    "description": "qkv projection -> RoPE via cos/sin buffers and rotate-half (slicing + cat) -> "
    "masked softmax attention with a strict-upper-triangle mask (triu, diagonal=1) "
    "-> output projection.",
}


class Model(nn.Module):
    def __init__(self, embed, heads, seq):
        super().__init__()
        self.heads = heads
        self.head_dim = embed // heads
        self.qkv = nn.Linear(embed, 3 * embed, bias=False)
        self.out = nn.Linear(embed, embed, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        angles = torch.arange(seq, dtype=torch.float32).unsqueeze(1) * inv_freq.unsqueeze(0)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.register_buffer("future", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def _rotate(self, t):
        half = self.head_dim // 2
        rotated = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
        return t * self.cos + rotated * self.sin

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = self._rotate(q.view(BATCH, SEQ, self.heads, self.head_dim).transpose(1, 2))
        k = self._rotate(k.view(BATCH, SEQ, self.heads, self.head_dim).transpose(1, 2))
        v = v.view(BATCH, SEQ, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores.masked_fill(self.future, float("-inf")), dim=-1)
        y = torch.matmul(probs, v).transpose(1, 2).contiguous().view(BATCH, SEQ, EMBED)
        return self.out(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS, SEQ]
