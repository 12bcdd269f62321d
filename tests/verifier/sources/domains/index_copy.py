"""index_copy with randint row indices (they may repeat: the last write in row order wins)."""

import torch
import torch.nn as nn

ROWS = 32
COLS = 8


class Model(nn.Module):
    def forward(self, x, index, source):
        return x.index_copy(0, index, source * 2.0)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, ROWS, (ROWS // 2,)), torch.randn(ROWS // 2, COLS)]


def get_init_inputs():
    return []
