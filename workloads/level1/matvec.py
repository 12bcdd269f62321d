# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix-vector product y = A @ x with x given as a column."""

import torch
import torch.nn as nn

M = 256
K = 256

STEPTP = {
    "name": "matvec",
    "level": 1,
    "tags": ["matmul", "gemv"],
    "ops": ["matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 2048, "K": 1048576},
    "description": "Matrix (M, K) times column vector (K, 1).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
