# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Product of a diagonal matrix, built with torch.diag, and a dense matrix."""

import torch
import torch.nn as nn

N = 64
M = 64

STEPTP = {
    "name": "matmul_diagonal",
    "level": 1,
    "tags": ["matmul", "diag"],
    "ops": ["diag", "matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"N": 4096, "M": 4096},
    "description": "diag(a) @ B, which scales every row of B; the diagonal matrix is materialised first.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.diag(a) @ b


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
