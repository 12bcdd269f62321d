# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Flash-attention forward written out: keys and values in blocks, a running max, a running sum and a
rescaled accumulator per query row (online softmax), causal, normalised once at the end."""

import math

import torch
import torch.nn as nn

BATCH = 1
HEADS = 2
SEQ = 16
HEAD_DIM = 16
KV_BLOCK = 4

STEPTP = {
    "name": "flash_attention_forward",
    "level": 3,
    "tags": ["llm", "attention", "mha", "causal", "online_softmax", "tiling", "slicing"],
    "ops": ["matmul", "transpose", "getitem", "masked_fill", "amax", "maximum", "exp", "sum", "mul", "add",
            "truediv", "triu"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "HEADS": 32, "SEQ": 4096, "HEAD_DIM": 128, "KV_BLOCK": 128},
    "description": "Blockwise causal attention with online softmax (running max m, sum l, accumulator o).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("future", torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1))

    def forward(self, q, k, v):
        q = q / math.sqrt(HEAD_DIM)
        m = torch.full((BATCH, HEADS, SEQ, 1), -1e30, dtype=q.dtype)
        l = torch.zeros(BATCH, HEADS, SEQ, 1, dtype=q.dtype)
        o = torch.zeros(BATCH, HEADS, SEQ, HEAD_DIM, dtype=q.dtype)
        for start in range(0, SEQ, KV_BLOCK):
            kb = k[:, :, start:start + KV_BLOCK]
            vb = v[:, :, start:start + KV_BLOCK]
            s = torch.matmul(q, kb.transpose(-1, -2))
            s = s.masked_fill(self.future[:, start:start + KV_BLOCK], -1e30)
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            alpha = torch.exp(m - m_new)
            l = l * alpha + p.sum(-1, keepdim=True)
            o = o * alpha + torch.matmul(p, vb)
            m = m_new
        return o / l


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ, HEAD_DIM),
            torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)]


def get_init_inputs():
    return []
