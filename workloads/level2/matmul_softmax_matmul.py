# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix product, softmax, matrix product (attention-shaped without heads)."""

import math

import torch
import torch.nn as nn

BATCH = 4
SEQ = 32
DIM = 32

STEPTP = {
    "name": "matmul_softmax_matmul",
    "level": 2,
    "tags": ["matmul", "softmax", "attention"],
    "ops": ["bmm", "transpose", "truediv", "softmax"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "SEQ": 1024, "DIM": 128},
    "description": "softmax(a @ b^T / sqrt(DIM)) @ c with explicit bmm calls.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        scores = torch.bmm(a, b.transpose(1, 2)) / math.sqrt(DIM)
        return torch.bmm(torch.softmax(scores, dim=-1), c)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return []
