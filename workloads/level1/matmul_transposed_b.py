# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix product with the right operand stored transposed: C = A @ B^T."""

import torch
import torch.nn as nn

M = 48
K = 64
N = 32

STEPTP = {
    "name": "matmul_transposed_b",
    "level": 1,
    "tags": ["matmul", "gemm", "transpose"],
    "ops": ["transpose", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 1024, "K": 4096, "N": 2048},
    "description": "B is given as (N, K), the layout of nn.Linear weights.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b.transpose(0, 1))


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
