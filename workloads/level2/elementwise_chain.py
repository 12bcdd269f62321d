# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A chain of unary elementwise ops: abs, sqrt, log, exp, add (no GEMM at all)."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 256

STEPTP = {
    "name": "elementwise_chain",
    "level": 2,
    "tags": ["elementwise", "fusion"],
    "ops": ["abs", "add", "sqrt", "log", "exp", "mul", "sub"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 65536},
    "description": "log(sqrt(|x| + 1) + 1) * exp(-|y|) - (x + y): several intermediates a fuser "
    "can eliminate.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        a = torch.sqrt(torch.abs(x) + 1.0)
        b = torch.log(a + 1.0)
        c = torch.exp(-torch.abs(y))
        return b * c - (x + y)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
