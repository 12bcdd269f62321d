"""A small MLP block (issue 46): linear, ReLU, a shift and (``SOFTMAX=1``) a softmax; verified in bf16."""

import torch
import torch.nn as nn

N = 8
IN = 32
OUT = 16
SOFTMAX = 0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(IN, OUT)
        self.register_buffer("shift", torch.randn(OUT))

    def forward(self, x):
        y = torch.relu(self.lin(x)) + self.shift
        return torch.softmax(y, dim=-1) if SOFTMAX else y


def get_inputs():
    return [torch.randn(N, IN)]


def get_init_inputs():
    return []
