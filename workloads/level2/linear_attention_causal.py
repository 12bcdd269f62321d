# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Causal linear attention with an elu+1 feature map, written with cumsum."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 2
SEQ = 16
HEAD_DIM = 16
EPS = 1e-06

STEPTP = {
    "name": "linear_attention_causal",
    "level": 2,
    "tags": ["attention", "causal", "linear_attention", "scan", "cumsum", "einsum"],
    "ops": ["elu", "add", "unsqueeze", "mul", "cumsum", "einsum", "truediv"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "HEADS": 16, "SEQ": 4096, "HEAD_DIM": 64},
    "description": "phi(q)_t . cumsum_s(phi(k)_s v_s^T) / phi(q)_t . cumsum_s(phi(k)_s): causal "
    "attention in linear time.",
}


class Model(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, q, k, v):
        fq = F.elu(q) + 1.0
        fk = F.elu(k) + 1.0
        kv = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=2)
        numerator = torch.einsum("bhld,bhlde->bhle", fq, kv)
        denominator = torch.einsum("bhld,bhld->bhl", fq, torch.cumsum(fk, dim=2))
        return numerator / (denominator.unsqueeze(-1) + self.eps)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [EPS]
