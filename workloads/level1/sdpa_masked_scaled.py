# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Scaled dot-product attention with an explicit scale and a boolean mask."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 4
SEQ = 16
HEAD_DIM = 32

STEPTP = {
    "name": "sdpa_masked_scaled",
    "level": 1,
    "tags": ["attention", "mha", "mask", "buffer"],
    "ops": ["scaled_dot_product_attention"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "HEADS": 32, "SEQ": 2048, "HEAD_DIM": 128},
    "description": "A banded boolean attn_mask (a registered buffer; True = attend) and a custom "
    "softmax scale.",
}


class Model(nn.Module):
    def __init__(self, seq):
        super().__init__()
        pos = torch.arange(seq)
        self.register_buffer("mask", (pos[:, None] - pos[None, :]).abs() <= 3)

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask, scale=0.1)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return [SEQ]
