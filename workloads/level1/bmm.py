# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Batched matrix multiplication with torch.bmm."""

import torch
import torch.nn as nn

BATCH = 4
M = 32
K = 48
N = 40

STEPTP = {
    "name": "bmm",
    "level": 1,
    "tags": ["matmul", "batched"],
    "ops": ["bmm"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "M": 512, "K": 1024, "N": 2048},
    "description": "Independent (M, K) @ (K, N) products for every batch entry.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
