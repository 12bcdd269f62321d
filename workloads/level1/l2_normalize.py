# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Row-wise L2 normalisation with F.normalize and with an explicit vector norm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
DIM = 256

STEPTP = {
    "name": "l2_normalize",
    "level": 1,
    "tags": ["reduction", "norm"],
    "ops": ["normalize", "linalg_vector_norm", "truediv", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "DIM": 16384},
    "description": "F.normalize(x, p=2, dim=1) plus x / torch.linalg.vector_norm(x, dim=1, keepdim=True).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1) + x / torch.linalg.vector_norm(x, ord=2, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
