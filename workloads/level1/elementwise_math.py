# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Unary math functions: exp, log, sqrt, abs, rsqrt, reciprocal, pow, erf."""

import torch
import torch.nn as nn

BATCH = 16
DIM = 128

STEPTP = {
    "name": "elementwise_math",
    "level": 1,
    "tags": ["elementwise"],
    "ops": ["abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "pow", "neg", "erf", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "A sum of unary math functions on a positive input, so every function is defined.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        p = torch.abs(x) + 0.5
        return (
            torch.exp(-p)
            + torch.log(p)
            + torch.sqrt(p)
            - torch.rsqrt(p)
            + torch.reciprocal(p)
            + p**1.5
            + torch.erf(x) * torch.exp(-x * x)
        )


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
