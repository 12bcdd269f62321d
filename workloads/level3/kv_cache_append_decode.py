# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""One decode step that writes the new token's key and value into the cache at its position (a
scatter by an index tensor, not a Python-indexed store) and then attends over the updated cache."""

import math

import torch
import torch.nn as nn

BATCH = 2
HEADS = 4
HEAD_DIM = 16
CTX = 16

STEPTP = {
    "name": "kv_cache_append_decode",
    "level": 3,
    "tags": ["llm", "attention", "mha", "decode", "kv_cache", "scatter", "mask"],
    "ops": ["scatter", "expand", "matmul", "transpose", "arange", "gt", "masked_fill", "softmax", "view"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "HEADS": 32, "HEAD_DIM": 128, "CTX": 4096},
    "description": "k/v of the new token scattered into the cache at position pos, then attention over "
    "positions <= pos; returns the output and both updated caches.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_new, v_new, k_cache, v_cache, pos):
        index = pos.view(BATCH, 1, 1, 1).expand(BATCH, HEADS, 1, HEAD_DIM)
        k_cache = k_cache.scatter(2, index, k_new.view(BATCH, HEADS, 1, HEAD_DIM))
        v_cache = v_cache.scatter(2, index, v_new.view(BATCH, HEADS, 1, HEAD_DIM))
        q = q.view(BATCH, HEADS, 1, HEAD_DIM)
        scores = torch.matmul(q, k_cache.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
        future = torch.arange(CTX)[None, :] > pos[:, None]
        scores = scores.masked_fill(future[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v_cache).view(BATCH, HEADS, HEAD_DIM)
        return out, k_cache, v_cache


def get_inputs():
    return [torch.randn(BATCH, HEADS, HEAD_DIM), torch.randn(BATCH, HEADS, HEAD_DIM),
            torch.randn(BATCH, HEADS, HEAD_DIM), torch.randn(BATCH, HEADS, CTX, HEAD_DIM),
            torch.randn(BATCH, HEADS, CTX, HEAD_DIM), torch.randint(0, CTX, (BATCH,))]


def get_init_inputs():
    return []
