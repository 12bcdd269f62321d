# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Four-dimensional batched matmul with broadcasting over the leading dimension."""

import torch
import torch.nn as nn

BATCH = 2
GROUPS = 3
M = 16
K = 24
N = 20

STEPTP = {
    "name": "matmul_4d",
    "level": 1,
    "tags": ["matmul", "batched", "broadcast"],
    "ops": ["matmul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 8, "GROUPS": 16, "M": 256, "K": 512, "N": 256},
    "description": "A (BATCH, GROUPS, M, K) times B (1, GROUPS, K, N): B is shared across the "
    "batch by broadcasting.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(BATCH, GROUPS, M, K), torch.randn(1, GROUPS, K, N)]


def get_init_inputs():
    return []
