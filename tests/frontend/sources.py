"""Small KernelBench-style source files the CLI, error and reference tests write to a temp dir."""

from __future__ import annotations

from pathlib import Path

LINEAR_RELU = '''\
import torch
import torch.nn as nn

N = 64
IN = 32
OUT = 16


class Model(nn.Module):
    HIDDEN = OUT * 2  # a class-definition-time use of a constant

    def __init__(self, scale):
        super().__init__()
        self.lin = nn.Linear(IN, self.HIDDEN)
        self.register_buffer("shift", torch.randn(self.HIDDEN))
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.lin(x) * self.scale + self.shift)


def get_inputs():
    return [torch.randn(N, IN)]


def get_init_inputs():
    return [0.5]
'''

UNSUPPORTED = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.lgamma(y)


def get_inputs():
    return [torch.randn(4, 4)]


def get_init_inputs():
    return []
'''
#: The line of ``torch.lgamma`` in ``UNSUPPORTED``.
UNSUPPORTED_LINE = 8

DATA_DEPENDENT = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * x.sum().item()


def get_inputs():
    return [torch.randn(4, 4)]
'''

RANDOM_IN_FORWARD = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + torch.randn_like(x)


def get_inputs():
    return [torch.randn(4, 4)]
'''

DROPOUT_TRAINING = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        return self.drop(x)


def get_inputs():
    return [torch.randn(4, 4)]
'''


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
