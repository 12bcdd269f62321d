# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A 3-D tensor times a matrix: every batch row block shares the right operand."""

import torch
import torch.nn as nn

BATCH = 4
M = 16
K = 64
N = 48

STEPTP = {
    "name": "matmul_3d_by_2d",
    "level": 1,
    "tags": ["matmul", "batched", "broadcast"],
    "ops": ["matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "M": 1024, "K": 2048, "N": 768},
    "description": "torch.matmul of (BATCH, M, K) by (K, N), the contraction used by linear layers "
    "over sequences.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
