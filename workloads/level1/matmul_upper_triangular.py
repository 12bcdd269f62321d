# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Product of two upper-triangular matrices, result kept upper triangular."""

import torch
import torch.nn as nn

N = 64

STEPTP = {
    "name": "matmul_upper_triangular",
    "level": 1,
    "tags": ["matmul", "triangular"],
    "ops": ["triu", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"N": 4096},
    "description": "triu(triu(A) @ triu(B)); the zero half of the operands is known structure.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.triu(torch.matmul(torch.triu(a), torch.triu(b)))


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
