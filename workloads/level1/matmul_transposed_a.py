# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix product with the left operand stored transposed: C = A^T @ B."""

import torch
import torch.nn as nn

M = 48
K = 64
N = 32

STEPTP = {
    "name": "matmul_transposed_a",
    "level": 1,
    "tags": ["matmul", "gemm", "transpose"],
    "ops": ["transpose", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 1024, "K": 4096, "N": 2048},
    "description": "A is given as (K, M) and transposed inside the program before the product.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.T, b)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []
