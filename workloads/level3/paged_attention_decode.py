# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Paged decode attention (vLLM): the KV cache is a pool of fixed-size blocks, each sequence's keys and
values are gathered through its block table (an index tensor), positions past seq_len are masked."""

import math

import torch
import torch.nn as nn

BATCH = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
BLOCK = 4
NUM_BLOCKS = 16
MAX_BLOCKS = 4

STEPTP = {
    "name": "paged_attention_decode",
    "level": 3,
    "tags": ["llm", "attention", "gqa", "decode", "kv_cache", "paged", "gather", "mask"],
    "ops": ["clamp", "index_select", "view", "permute", "matmul", "transpose", "arange", "masked_fill",
            "softmax"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "HEADS": 32, "KV_HEADS": 8, "HEAD_DIM": 128, "BLOCK": 16,
                     "NUM_BLOCKS": 8192, "MAX_BLOCKS": 256},
    "description": "k/v blocks (NUM_BLOCKS, BLOCK, KVH, D) gathered by block_table (B, MAX_BLOCKS), "
    "grouped-query attention of one token per sequence, seq_len mask.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def _gather(self, pool, block_table):
        # clamped as a kernel guards its gather: a no-op on a valid table, and a table of any values
        # (the verifier draws its own) still reads blocks of the pool
        blocks = torch.index_select(pool, 0, block_table.view(-1).clamp(0, NUM_BLOCKS - 1))
        blocks = blocks.view(BATCH, MAX_BLOCKS * BLOCK, KV_HEADS, HEAD_DIM)
        return blocks.permute(0, 2, 1, 3)

    def forward(self, q, k_pool, v_pool, block_table, seq_lens):
        group = HEADS // KV_HEADS
        k = self._gather(k_pool, block_table)
        v = self._gather(v_pool, block_table)
        q = q.view(BATCH, KV_HEADS, group, HEAD_DIM)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
        invalid = torch.arange(MAX_BLOCKS * BLOCK)[None, :] >= seq_lens[:, None]
        scores = scores.masked_fill(invalid[:, None, None, :], float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v).view(BATCH, HEADS, HEAD_DIM)


def get_inputs():
    return [torch.randn(BATCH, HEADS, HEAD_DIM), torch.randn(NUM_BLOCKS, BLOCK, KV_HEADS, HEAD_DIM),
            torch.randn(NUM_BLOCKS, BLOCK, KV_HEADS, HEAD_DIM),
            torch.randint(0, NUM_BLOCKS, (BATCH, MAX_BLOCKS)),
            torch.randint(1, MAX_BLOCKS * BLOCK + 1, (BATCH,))]


def get_init_inputs():
    return []
