# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Log-likelihood style epilogue of a GEMM: log(sigmoid(v)) and logsigmoid(v) of ten operands."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
IN = 8
OUT = 16

STEPTP = {
    "name": "log_activation_mix",
    "level": 2,
    "tags": ["gemm", "epilogue", "activation"],
    "ops": ["linear", "sigmoid", "log", "logsigmoid", "neg", "mul", "sub", "add", "mean"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 128, "IN": 1024, "OUT": 1024},
    "description": ("z = linear(x); the mean of log(sigmoid(v)) and logsigmoid(v) for ten operands v derived "
                    "from z: after compute_inline the first is the log of a quotient of provably positive "
                    "values (an expand_log site), the second a negated log (a logsimp site)."),
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(IN, OUT)

    def forward(self, x):
        z = self.linear(x)
        total = None
        for v in (z, -z, 2 * z, z - 1, z * z, z + 1, 0.5 * z, z * x.mean(), z * z * z, 3 - z):
            term = torch.log(torch.sigmoid(v)) + F.logsigmoid(v)
            total = term if total is None else total + term
        return total.mean()


def get_inputs():
    return [torch.randn(BATCH, IN)]


def get_init_inputs():
    return []
