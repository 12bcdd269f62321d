"""The log of a strictly positive input drawn by rand(): the verifier must keep it positive."""

import torch
import torch.nn as nn

ROWS = 16
COLS = 64


class Model(nn.Module):
    def forward(self, p, x):
        return torch.log(p) * x + torch.sqrt(p)


def get_inputs():
    return [torch.rand(ROWS, COLS) + 1e-3, torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
