# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""RoPE for a batch of decode tokens at arbitrary positions: cos/sin rows gathered from a cache by
position id (vLLM's rotary_embedding with a cos_sin_cache), GPT-NeoX rotate-half on q and k."""

import torch
import torch.nn as nn

TOKENS = 8
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
MAX_POS = 64

STEPTP = {
    "name": "rope_position_gather",
    "level": 3,
    "tags": ["llm", "rope", "gather", "buffer", "slicing", "decode"],
    "ops": ["index_select", "getitem", "neg", "cat", "mul", "add", "unsqueeze"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 256, "HEADS": 32, "KV_HEADS": 8, "HEAD_DIM": 128, "MAX_POS": 131072},
    "description": "cos/sin rows picked by position ids (index_select) then rotate-half RoPE on q and k.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
        angles = torch.arange(MAX_POS, dtype=torch.float32)[:, None] * inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos_cache", angles.cos())
        self.register_buffer("sin_cache", angles.sin())

    def _rotate(self, t, cos, sin):
        half = HEAD_DIM // 2
        return t * cos + torch.cat((-t[..., half:], t[..., :half]), dim=-1) * sin

    def forward(self, q, k, positions):
        cos = torch.index_select(self.cos_cache, 0, positions).unsqueeze(1)
        sin = torch.index_select(self.sin_cache, 0, positions).unsqueeze(1)
        return self._rotate(q, cos, sin), self._rotate(k, cos, sin)


def get_inputs():
    return [torch.randn(TOKENS, HEADS, HEAD_DIM), torch.randn(TOKENS, KV_HEADS, HEAD_DIM),
            torch.randint(0, MAX_POS, (TOKENS,))]


def get_init_inputs():
    return []
