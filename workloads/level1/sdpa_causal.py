# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal scaled dot-product attention."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 4
SEQ = 16
HEAD_DIM = 32

STEPTP = {
    "name": "sdpa_causal",
    "level": 1,
    "tags": ["attention", "mha", "causal"],
    "ops": ["scaled_dot_product_attention"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "HEADS": 32, "SEQ": 2048, "HEAD_DIM": 128},
    "description": "is_causal=True: position i attends to positions <= i only.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
