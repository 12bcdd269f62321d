# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""MoE experts with a fixed capacity, routing given as index tensors: each expert's CAPACITY token
indices gather its inputs, a batched SwiGLU expert MLP runs on every expert at once, and the outputs,
weighted by the combine weights, are added back to their tokens with index_add (repeats sum)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 16
HIDDEN = 16
FFN = 32
EXPERTS = 4
CAPACITY = 8

STEPTP = {
    "name": "moe_expert_gemms",
    "level": 3,
    "tags": ["llm", "moe", "gather", "bmm", "swiglu", "index_add", "capacity"],
    "ops": ["view", "clamp", "index_select", "bmm", "silu", "mul", "index_add", "zeros"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 4096, "HIDDEN": 4096, "FFN": 14336, "EXPERTS": 8, "CAPACITY": 1280},
    "description": "x[token_index] (E, C, H) -> bmm gate/up -> silu * up -> bmm down -> * weight -> "
    "index_add into (T, H).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_gate = nn.Parameter(torch.randn(EXPERTS, HIDDEN, FFN) / HIDDEN ** 0.5)
        self.w_up = nn.Parameter(torch.randn(EXPERTS, HIDDEN, FFN) / HIDDEN ** 0.5)
        self.w_down = nn.Parameter(torch.randn(EXPERTS, FFN, HIDDEN) / FFN ** 0.5)

    def forward(self, x, token_index, combine_weight):
        # clamped as a kernel guards its gather and scatter: a no-op on valid routing
        flat = token_index.view(EXPERTS * CAPACITY).clamp(0, TOKENS - 1)
        xe = torch.index_select(x, 0, flat).view(EXPERTS, CAPACITY, HIDDEN)
        h = F.silu(torch.bmm(xe, self.w_gate)) * torch.bmm(xe, self.w_up)
        y = torch.bmm(h, self.w_down) * combine_weight.view(EXPERTS, CAPACITY, 1)
        out = torch.zeros(TOKENS, HIDDEN, dtype=x.dtype)
        return out.index_add(0, flat, y.view(EXPERTS * CAPACITY, HIDDEN))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN), torch.randint(0, TOKENS, (EXPERTS, CAPACITY)),
            torch.rand(EXPERTS, CAPACITY)]


def get_init_inputs():
    return []
