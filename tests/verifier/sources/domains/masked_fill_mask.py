"""masked_fill with a boolean mask input drawn by comparing rand() with a threshold."""

import torch
import torch.nn as nn

ROWS = 16
COLS = 32


class Model(nn.Module):
    def forward(self, x, mask):
        return torch.softmax(x.masked_fill(mask, -1.0e4), dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.rand(ROWS, COLS) > 0.3]


def get_init_inputs():
    return []
