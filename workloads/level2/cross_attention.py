# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Multi-head cross-attention: queries from one sequence, keys/values from another."""

import torch
import torch.nn as nn

BATCH = 2
SEQ_Q = 12
SEQ_KV = 20
EMBED = 64
HEADS = 4

STEPTP = {
    "name": "cross_attention",
    "level": 2,
    "tags": ["attention", "mha", "cross"],
    "ops": ["linear", "view", "transpose", "matmul", "mul", "softmax", "contiguous"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ_Q": 1024, "SEQ_KV": 4096, "EMBED": 1024, "HEADS": 16},
    "description": "Different query and key/value lengths (SEQ_Q != SEQ_KV), as in encoder-decoder "
    "attention.",
}


class Model(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = embed // heads
        self.q_proj = nn.Linear(embed, embed)
        self.kv_proj = nn.Linear(embed, 2 * embed)
        self.out_proj = nn.Linear(embed, embed)

    def forward(self, x, memory):
        q = self.q_proj(x).view(BATCH, SEQ_Q, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv_proj(memory).chunk(2, dim=-1)
        k = k.view(BATCH, SEQ_KV, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(BATCH, SEQ_KV, self.heads, self.head_dim).transpose(1, 2)
        probs = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.head_dim**-0.5, dim=-1)
        y = torch.matmul(probs, v).transpose(1, 2).contiguous().view(BATCH, SEQ_Q, EMBED)
        return self.out_proj(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ_Q, EMBED), torch.randn(BATCH, SEQ_KV, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS]
