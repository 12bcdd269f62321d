# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""One GRU cell step written with linear layers, chunk, sigmoid and tanh."""

import torch
import torch.nn as nn

BATCH = 16
INPUT_SIZE = 64
HIDDEN = 64

STEPTP = {
    "name": "gru_cell",
    "level": 2,
    "tags": ["rnn", "gemm", "gating"],
    "ops": ["linear", "chunk", "sigmoid", "tanh", "mul", "add", "rsub"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 256, "INPUT_SIZE": 1024, "HIDDEN": 1024},
    "description": "r, z = sigmoid(...), n = tanh(x_n + r * h_n), h' = (1 - z) * n + z * h.",
}


class Model(nn.Module):
    def __init__(self, input_size, hidden):
        super().__init__()
        self.ih = nn.Linear(input_size, 3 * hidden)
        self.hh = nn.Linear(hidden, 3 * hidden)

    def forward(self, x, h):
        x_r, x_z, x_n = self.ih(x).chunk(3, dim=1)
        h_r, h_z, h_n = self.hh(h).chunk(3, dim=1)
        r = torch.sigmoid(x_r + h_r)
        z = torch.sigmoid(x_z + h_z)
        n = torch.tanh(x_n + r * h_n)
        return (1.0 - z) * n + z * h


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN]
