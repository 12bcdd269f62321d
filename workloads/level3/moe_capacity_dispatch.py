# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Switch/GShard MoE dispatch with a fixed capacity per expert, all static: top-1 routing, each token's
slot in its expert from a cumulative sum over one-hot assignments, tokens past the capacity dropped, and
the dispatch / combine tensors (tokens, experts, capacity) applied by einsum."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 16
HIDDEN = 16
EXPERTS = 4
CAPACITY = 6

STEPTP = {
    "name": "moe_capacity_dispatch",
    "level": 3,
    "tags": ["llm", "moe", "router", "dispatch", "capacity", "cumsum", "einsum"],
    "ops": ["linear", "softmax", "argmax", "one_hot", "cumsum", "mul", "sum", "lt", "einsum", "amax", "to"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 4096, "HIDDEN": 4096, "EXPERTS": 64, "CAPACITY": 80},
    "description": "Top-1 router, slot = cumsum(one_hot) - 1, kept if slot < CAPACITY; expert inputs "
    "(E, C, H) = einsum(dispatch, x); also the gate-weighted combine tensor.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(HIDDEN, EXPERTS, bias=False)

    def forward(self, x):
        logits = F.linear(x.float(), self.gate.weight.float())  # routing in f32, as MoE routers do
        probs = torch.softmax(logits, dim=-1)
        expert = probs.argmax(dim=-1)
        assign = F.one_hot(expert, EXPERTS).float()
        slot = ((torch.cumsum(assign, dim=0) - 1) * assign).sum(dim=-1)
        kept = (slot < CAPACITY).float()
        slot_hot = F.one_hot(slot.to(torch.int64).clamp(max=CAPACITY - 1), CAPACITY).float()
        dispatch = assign[:, :, None] * slot_hot[:, None, :] * kept[:, None, None]
        combine = dispatch * probs.amax(dim=-1)[:, None, None]
        expert_inputs = torch.einsum("tec,th->ech", dispatch.to(x.dtype), x)
        return expert_inputs, combine


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return []
