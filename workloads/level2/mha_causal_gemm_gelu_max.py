# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal attention, linear + tanh GELU, then a max over the hidden axis."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
EMBED = 64
HEADS = 4
HIDDEN = 96

STEPTP = {
    "name": "mha_causal_gemm_gelu_max",
    "level": 2,
    "tags": ["attention", "mha", "causal", "gemm", "epilogue", "reduction", "buffer"],
    "ops": [
        "linear",
        "view",
        "transpose",
        "matmul",
        "mul",
        "masked_fill",
        "softmax",
        "contiguous",
        "gelu",
        "amax",
    ],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 2048, "EMBED": 4096, "HEADS": 32, "HIDDEN": 11008},
    "description": "Causal MHA -> Linear -> GELU(tanh) -> amax(dim=-1).",
}


class Model(nn.Module):
    def __init__(self, embed, heads, hidden):
        super().__init__()
        self.heads = heads
        self.kv_heads = heads
        self.head_dim = embed // heads
        self.q_proj = nn.Linear(embed, embed)
        self.k_proj = nn.Linear(embed, self.kv_heads * self.head_dim)
        self.v_proj = nn.Linear(embed, self.kv_heads * self.head_dim)
        self.out_proj = nn.Linear(embed, embed)
        self.register_buffer("causal_mask", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ))
        self.fc = nn.Linear(embed, hidden)

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
        y = F.gelu(self.fc(y), approximate="tanh").amax(dim=-1)
        return y


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS, HIDDEN]
