# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Tall-skinny product: (M, K) @ (K, M) with K much smaller than M."""

import torch
import torch.nn as nn

M = 128
K = 8

STEPTP = {
    "name": "matmul_tall_skinny",
    "level": 1,
    "tags": ["matmul", "gemm"],
    "ops": ["matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 16384, "K": 16},
    "description": "A rank-K outer-product-like GEMM whose output is far larger than its inputs.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, M)]


def get_init_inputs():
    return []
