# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Mamba-style selective scan written loop-free with cumsum, exp and einsum."""

import torch
import torch.nn as nn

BATCH = 2
SEQ = 16
CHANNELS = 8
STATE = 4

STEPTP = {
    "name": "selective_scan",
    "level": 2,
    "tags": ["ssm", "scan", "mamba", "cumsum", "einsum", "parameter", "buffer"],
    "ops": ["exp", "neg", "unsqueeze", "mul", "cumsum", "sub", "masked_fill", "bitwise_not", "einsum", "add"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 256, "CHANNELS": 1536, "STATE": 16},
    "description": "h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t, y_t = C_t h_t + D u_t, "
    "computed as a decay-weighted sum exp(cumsum_t - cumsum_s) over s <= t instead "
    "of a sequential loop.",
}


class Model(nn.Module):
    def __init__(self, channels, state, seq):
        super().__init__()
        # A = -exp(a_log) < 0 per (channel, state), initialised to -1, -2, ..., -STATE as in S4D-real.
        a_init = torch.arange(1, state + 1, dtype=torch.float32).repeat(channels, 1)
        self.a_log = nn.Parameter(torch.log(a_init))
        self.d_skip = nn.Parameter(torch.ones(channels))
        causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, seq, seq, 1, 1))

    def forward(self, u, delta, b, c):
        # u, delta: (BATCH, SEQ, CHANNELS); b, c: (BATCH, SEQ, STATE)
        a = -torch.exp(self.a_log)
        log_decay = torch.cumsum(delta.unsqueeze(-1) * a, dim=1)
        # segment[b, t, s] = sum of delta * A over steps s+1..t (only s <= t is kept)
        segment = log_decay.unsqueeze(2) - log_decay.unsqueeze(1)
        decay = torch.exp(segment.masked_fill(~self.causal, float("-inf")))
        drive = (delta * u).unsqueeze(-1) * b.unsqueeze(2)
        h = torch.einsum("btsdn,bsdn->btdn", decay, drive)
        y = torch.einsum("btdn,btn->btd", h, c)
        return y + u * self.d_skip


def get_inputs():
    u = torch.randn(BATCH, SEQ, CHANNELS)
    delta = 0.05 + 0.5 * torch.rand(BATCH, SEQ, CHANNELS)
    b = torch.randn(BATCH, SEQ, STATE)
    c = torch.randn(BATCH, SEQ, STATE)
    return [u, delta, b, c]


def get_init_inputs():
    return [CHANNELS, STATE, SEQ]
