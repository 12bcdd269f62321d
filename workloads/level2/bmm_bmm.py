# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Two chained batched matrix products: (A @ B) @ C."""

import torch
import torch.nn as nn

BATCH = 4
M = 32
K = 32
N = 32
P = 32

STEPTP = {
    "name": "bmm_bmm",
    "level": 2,
    "tags": ["matmul", "batched"],
    "ops": ["bmm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 64, "M": 512, "K": 512, "N": 512, "P": 512},
    "description": "torch.bmm(torch.bmm(a, b), c).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        return torch.bmm(torch.bmm(a, b), c)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N), torch.randn(BATCH, N, P)]


def get_init_inputs():
    return []
