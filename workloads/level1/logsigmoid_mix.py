# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Log-sigmoid of several operands, fused and spelled out: where logsimp and expand_log find sites."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
DIM = 32

STEPTP = {
    "name": "logsigmoid_mix",
    "level": 1,
    "tags": ["activation", "elementwise", "loss"],
    "ops": ["logsigmoid", "sigmoid", "log", "neg", "sub", "mul", "add", "mean"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "DIM": 16384},
    "description": ("F.logsigmoid(v) and log(sigmoid(v)) of x, -x, y, -y, x-y, x*y and 2x, summed and "
                    "averaged: the first is min(v,0)-log(1+exp(-|v|)), a negated log of a provably positive "
                    "value; the second, after compute_inline, the log of a quotient 1/(1+exp(-v))."),
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        terms = []
        for v in (x, -x, y, -y, x - y, x * y, 2 * x):
            terms += [F.logsigmoid(v), torch.log(torch.sigmoid(v))]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total.mean()


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
