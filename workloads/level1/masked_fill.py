# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Fill positions chosen by a boolean mask input with a constant."""

import torch
import torch.nn as nn

BATCH = 4
ROWS = 32
COLS = 32
FILL = -3.0

STEPTP = {
    "name": "masked_fill",
    "level": 1,
    "tags": ["elementwise", "mask"],
    "ops": ["masked_fill", "logical_not"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "ROWS": 1024, "COLS": 1024},
    "description": "x.masked_fill(mask, FILL) with a broadcast (ROWS, COLS) mask, plus x "
    "with the masked positions zeroed instead.",
}


class Model(nn.Module):
    def __init__(self, fill):
        super().__init__()
        self.fill = fill

    def forward(self, x, mask):
        return x.masked_fill(mask, self.fill) + x.masked_fill(torch.logical_not(mask), 0.0)


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS), torch.rand(ROWS, COLS) > 0.5]


def get_init_inputs():
    return [FILL]
