# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Product of two lower-triangular matrices, result kept lower triangular."""

import torch
import torch.nn as nn

N = 64

STEPTP = {
    "name": "matmul_lower_triangular",
    "level": 1,
    "tags": ["matmul", "triangular"],
    "ops": ["tril", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"N": 4096},
    "description": "tril(tril(A) @ tril(B)).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.tril(torch.matmul(torch.tril(a), torch.tril(b)))


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
