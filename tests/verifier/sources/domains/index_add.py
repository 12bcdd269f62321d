"""index_add_ with indices drawn by randint: the verifier must not feed an index outside [0, ROWS)."""

import torch
import torch.nn as nn

ROWS = 64
COLS = 16
UPDATES = 96


class Model(nn.Module):
    def forward(self, x, index, source):
        return x.index_add(0, index, source)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, ROWS, (UPDATES,)), torch.randn(UPDATES, COLS)]


def get_init_inputs():
    return []
