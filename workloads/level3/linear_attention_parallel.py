# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal linear attention (Katharopoulos et al.) in its parallel, masked quadratic form (level2's
linear_attention_causal is the cumsum form): feature map elu + 1, scores q k^T masked to the lower
triangle, normalised by the row sums."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 2
SEQ = 16
HEAD_DIM = 16

STEPTP = {
    "name": "linear_attention_parallel",
    "level": 3,
    "tags": ["llm", "attention", "linear_attention", "causal", "mask"],
    "ops": ["elu", "add", "matmul", "transpose", "tril", "mul", "sum", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 8, "HEADS": 16, "SEQ": 4096, "HEAD_DIM": 64},
    "description": "phi(x) = elu(x) + 1; out = (tril(phi(q) phi(k)^T) v) / (tril(phi(q) phi(k)^T) 1).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("causal", torch.tril(torch.ones(SEQ, SEQ)))

    def forward(self, q, k, v):
        q = F.elu(q) + 1
        k = F.elu(k) + 1
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.causal
        return torch.matmul(scores, v) / (scores.sum(-1, keepdim=True) + 1e-6)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ, HEAD_DIM),
            torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)]


def get_init_inputs():
    return []
