# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""DeltaNet's delta-rule recurrence (Yang et al. 2024): a (D_k x D_v) state updated per token by
S <- S - beta_t (S^T k_t - v_t) k_t^T, read by q_t; L2-normalised keys, a Python loop over time."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 2
SEQ = 8
HEAD_DIM = 8

STEPTP = {
    "name": "delta_rule_attention",
    "level": 3,
    "tags": ["llm", "attention", "linear_attention", "delta_rule", "recurrence", "slicing"],
    "ops": ["normalize", "sigmoid", "getitem", "matmul", "unsqueeze", "sub", "mul", "stack", "zeros"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 8, "HEADS": 16, "SEQ": 4096, "HEAD_DIM": 128},
    "description": "Sequential delta rule: S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T, "
    "o_t = S_t^T q_t.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, beta):
        k = F.normalize(k, dim=-1)
        beta = torch.sigmoid(beta)
        state = torch.zeros(BATCH, HEADS, HEAD_DIM, HEAD_DIM, dtype=q.dtype)
        outs = []
        for t in range(SEQ):
            kt = k[:, :, t].unsqueeze(-1)
            vt = v[:, :, t].unsqueeze(-2)
            predicted = torch.matmul(kt.transpose(-1, -2), state)
            state = state + beta[:, :, t, None, None] * torch.matmul(kt, vt - predicted)
            outs.append(torch.matmul(q[:, :, t].unsqueeze(-2), state).squeeze(-2))
        return torch.stack(outs, dim=2)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ, HEAD_DIM),
            torch.randn(BATCH, HEADS, SEQ, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ)]


def get_init_inputs():
    return []
