# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""vLLM's silu_and_mul activation: the fused gate-up projection's output split in halves, silu(a) * b."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 8
INTERMEDIATE = 64

STEPTP = {
    "name": "silu_and_mul",
    "level": 3,
    "tags": ["llm", "swiglu", "elementwise", "slicing"],
    "ops": ["chunk", "silu", "mul"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 8192, "INTERMEDIATE": 14336},
    "description": "x of width 2*INTERMEDIATE chunked into gate and up halves, silu(gate) * up.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(TOKENS, 2 * INTERMEDIATE)]


def get_init_inputs():
    return []
