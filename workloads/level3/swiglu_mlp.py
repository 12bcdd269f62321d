# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""The Llama feed-forward block: down(silu(gate(x)) * up(x)), no biases."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 8
HIDDEN = 32
INTERMEDIATE = 64

STEPTP = {
    "name": "swiglu_mlp",
    "level": 3,
    "tags": ["llm", "gemm", "mlp", "swiglu", "epilogue"],
    "ops": ["linear", "silu", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 4096, "HIDDEN": 4096, "INTERMEDIATE": 14336},
    "description": "SwiGLU MLP: gate and up projections, silu(gate) * up, down projection.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.down = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return []
