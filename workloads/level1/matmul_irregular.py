# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Matrix product with awkward, non-power-of-two extents."""

import torch
import torch.nn as nn

M = 37
K = 53
N = 29

STEPTP = {
    "name": "matmul_irregular",
    "level": 1,
    "tags": ["matmul", "gemm"],
    "ops": ["matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 8205, "K": 2949, "N": 5921},
    "description": "Prime-sized M, K and N that defeat even tiling.",
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
