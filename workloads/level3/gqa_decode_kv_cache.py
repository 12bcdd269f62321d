# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Grouped-query decode attention over a KV cache: one new query token per sequence attends to the
cache's first seq_len positions (a length mask, the static form of a ragged batch)."""

import math

import torch
import torch.nn as nn

BATCH = 2
HEADS = 8
KV_HEADS = 2
HEAD_DIM = 16
CTX = 32

STEPTP = {
    "name": "gqa_decode_kv_cache",
    "level": 3,
    "tags": ["llm", "attention", "gqa", "decode", "kv_cache", "mask"],
    "ops": ["view", "matmul", "transpose", "arange", "lt", "masked_fill", "softmax", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "HEADS": 32, "KV_HEADS": 8, "HEAD_DIM": 128, "CTX": 8192},
    "description": "q (B, H, 1, D) against a (B, KVH, CTX, D) cache, grouped heads, "
    "positions >= seq_len masked.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_cache, v_cache, seq_lens):
        group = HEADS // KV_HEADS
        q = q.view(BATCH, KV_HEADS, group, HEAD_DIM)
        scores = torch.matmul(q, k_cache.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
        invalid = torch.arange(CTX)[None, :] >= seq_lens[:, None]
        scores = scores.masked_fill(invalid[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v_cache)
        return out.view(BATCH, HEADS, HEAD_DIM)


def get_inputs():
    return [torch.randn(BATCH, HEADS, HEAD_DIM), torch.randn(BATCH, KV_HEADS, CTX, HEAD_DIM),
            torch.randn(BATCH, KV_HEADS, CTX, HEAD_DIM), torch.randint(1, CTX + 1, (BATCH,))]


def get_init_inputs():
    return []
