# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""RMSNorm of the query heads followed by rotary position embeddings (Llama/Qwen-style QK-norm + RoPE)."""

import torch
import torch.nn as nn

BATCH = 2
SEQ = 16
HEADS = 4
HEAD_DIM = 16
EPS = 1e-6

STEPTP = {
    "name": "rmsnorm_rope",
    "level": 3,
    "tags": ["llm", "rms_norm", "rope", "buffer", "slicing"],
    "ops": ["pow", "mean", "rsqrt", "mul", "getitem", "neg", "cat", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 4096, "HEADS": 32, "HEAD_DIM": 128},
    "description": "Per-head RMSNorm with a learned weight, then RoPE (rotate-half) from cos/sin tables.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(HEAD_DIM))
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
        angles = torch.arange(SEQ, dtype=torch.float32)[:, None] * inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos()[:, None, :])
        self.register_buffer("sin", angles.sin()[:, None, :])

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight
        half = HEAD_DIM // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * self.cos + rotated * self.sin


def get_inputs():
    return [torch.randn(BATCH, SEQ, HEADS, HEAD_DIM)]


def get_init_inputs():
    return []
