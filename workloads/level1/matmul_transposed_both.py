# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix product of two transposed operands: C = A^T @ B^T."""

import torch
import torch.nn as nn

M = 40
K = 56
N = 36

STEPTP = {
    "name": "matmul_transposed_both",
    "level": 1,
    "tags": ["matmul", "gemm", "transpose"],
    "ops": ["transpose", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 1024, "K": 4096, "N": 2048},
    "description": "Both operands arrive in the transposed layout (A as (K, M), B as (N, K)).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.T, b.T)


def get_inputs():
    return [torch.randn(K, M), torch.randn(N, K)]


def get_init_inputs():
    return []
