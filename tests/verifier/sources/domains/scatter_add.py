"""scatter_add along the last axis with randint indices into a zero tensor made from the input."""

import torch
import torch.nn as nn

BATCH = 8
WIDTH = 32
UPDATES = 48


class Model(nn.Module):
    def forward(self, x, index, source):
        return torch.zeros_like(x).scatter_add(1, index, source) + x


def get_inputs():
    return [torch.randn(BATCH, WIDTH), torch.randint(0, WIDTH, (BATCH, UPDATES)), torch.randn(BATCH, UPDATES)]


def get_init_inputs():
    return []
