# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Batched matrix product written as einsum('bij,bjk->bik')."""

import torch
import torch.nn as nn

BATCH = 4
I = 32
J = 32
K = 32

STEPTP = {
    "name": "einsum_bmm",
    "level": 1,
    "tags": ["matmul", "einsum", "batched"],
    "ops": ["einsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "I": 512, "J": 512, "K": 512},
    "description": "General einsum front end: contraction over j with a shared batch index.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.einsum("bij,bjk->bik", a, b)


def get_inputs():
    return [torch.randn(BATCH, I, J), torch.randn(BATCH, J, K)]


def get_init_inputs():
    return []
