# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Log-sigmoid terms and a log-ratio written out with log, sigmoid and exp (algebraic-rewrite sites)."""

import torch
import torch.nn as nn

BATCH = 4
DIM = 32

STEPTP = {
    "name": "log_sigmoid_terms",
    "level": 1,
    "tags": ["activation", "elementwise", "loss"],
    "ops": ["log", "sigmoid", "exp"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": ("log(sigmoid(x)) + log(sigmoid(y)) and log(exp(x) / (1 + exp(y))): logarithms of "
                    "provably positive products and quotients, where expand_log and logsimp apply "
                    "after compute_inline."),
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        a = torch.log(torch.sigmoid(x))
        b = torch.log(torch.sigmoid(y))
        c = torch.log(torch.exp(x) / (1 + torch.exp(y)))
        return a + b + c


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
