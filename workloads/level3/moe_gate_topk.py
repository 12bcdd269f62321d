# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""The MoE router (Mixtral): gate logits, softmax, top-k experts per token, weights renormalised over the
chosen k and scattered into a dense (tokens, experts) combine matrix — routing as tensors, no branches."""

import torch
import torch.nn as nn

TOKENS = 8
HIDDEN = 32
EXPERTS = 8
TOP_K = 2

STEPTP = {
    "name": "moe_gate_topk",
    "level": 3,
    "tags": ["llm", "moe", "router", "topk", "scatter"],
    "ops": ["linear", "softmax", "topk", "sum", "truediv", "zeros", "scatter"],
    "license": "Apache-2.0",
    "paper_shapes": {"TOKENS": 4096, "HIDDEN": 4096, "EXPERTS": 8, "TOP_K": 2},
    "description": "softmax(gate(x)) -> top-k -> renormalise -> dense combine weights (T, E) by scatter.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(HIDDEN, EXPERTS, bias=False)

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=-1)
        weights, experts = torch.topk(probs, TOP_K, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return torch.zeros(TOKENS, EXPERTS, dtype=x.dtype).scatter(1, experts, weights)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return []
