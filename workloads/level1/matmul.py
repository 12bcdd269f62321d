# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Plain matrix product C = A @ B."""

import torch
import torch.nn as nn

M = 64
K = 64
N = 64

STEPTP = {
    "name": "matmul",
    "level": 1,
    "tags": ["matmul", "gemm"],
    "ops": ["matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 1024, "K": 4096, "N": 2048},
    "size_ranges": {"M": [32, 96, 16], "K": [32, 96, 16], "N": [32, 96, 16]},
    "description": "Standard matrix multiplication of an (M, K) by a (K, N) matrix.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
