# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Outer product and scaled row sum via einsum('i,j->ij') and einsum('ij->i')."""

import torch
import torch.nn as nn

M = 128
N = 96

STEPTP = {
    "name": "einsum_outer",
    "level": 1,
    "tags": ["einsum", "broadcast"],
    "ops": ["einsum"],
    "license": "Apache-2.0",
    "paper_shapes": {"M": 8192, "N": 8192},
    "description": "Two einsum forms without a contraction: an outer product and a one-operand reduction.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, u, v):
        outer = torch.einsum("i,j->ij", u, v)
        return outer - torch.einsum("ij->i", outer).unsqueeze(1) / N


def get_inputs():
    return [torch.randn(M), torch.randn(N)]


def get_init_inputs():
    return []
