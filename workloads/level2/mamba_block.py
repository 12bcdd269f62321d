# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A Mamba block: input projection, causal depthwise conv, SiLU, selective scan, gating, output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
D_MODEL = 16
D_INNER = 32
STATE = 4
DT_RANK = 4
CONV_KERNEL = 4

STEPTP = {
    "name": "mamba_block",
    "level": 2,
    "tags": [
        "ssm",
        "scan",
        "mamba",
        "cumsum",
        "einsum",
        "conv",
        "conv1d",
        "depthwise",
        "gemm",
        "parameter",
        "buffer",
    ],
    "ops": [
        "linear",
        "chunk",
        "transpose",
        "conv1d",
        "getitem",
        "silu",
        "split",
        "softplus",
        "exp",
        "cumsum",
        "masked_fill",
        "einsum",
        "mul",
        "add",
    ],
    "license": "Apache-2.0",
    "paper_shapes": {
        "BATCH": 16,
        "SEQ": 256,
        "D_MODEL": 768,
        "D_INNER": 1536,
        "STATE": 16,
        "DT_RANK": 48,
        "CONV_KERNEL": 4,
    },
    "description": "in_proj -> (x, z); x -> causal depthwise Conv1d -> SiLU -> input-dependent "
    "delta, B, C -> cumsum-based selective scan -> * SiLU(z) -> out_proj.",
}


class Model(nn.Module):
    def __init__(self, d_model, d_inner, state, dt_rank, conv_kernel, seq):
        super().__init__()
        self.d_inner = d_inner
        self.state = state
        self.dt_rank = dt_rank
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv = nn.Conv1d(d_inner, d_inner, conv_kernel, groups=d_inner, padding=conv_kernel - 1)
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * state, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d_inner)
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)
        a_init = torch.arange(1, state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.a_log = nn.Parameter(torch.log(a_init))
        self.d_skip = nn.Parameter(torch.ones(d_inner))
        causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, seq, seq, 1, 1))

    def forward(self, x):
        u, z = self.in_proj(x).chunk(2, dim=-1)
        # Causal depthwise convolution: pad both sides, keep the first SEQ outputs.
        u = self.conv(u.transpose(1, 2))[:, :, :SEQ].transpose(1, 2)
        u = F.silu(u)
        dt, b, c = torch.split(self.x_proj(u), [self.dt_rank, self.state, self.state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        a = -torch.exp(self.a_log)
        log_decay = torch.cumsum(delta.unsqueeze(-1) * a, dim=1)
        segment = log_decay.unsqueeze(2) - log_decay.unsqueeze(1)
        decay = torch.exp(segment.masked_fill(~self.causal, float("-inf")))
        drive = (delta * u).unsqueeze(-1) * b.unsqueeze(2)
        h = torch.einsum("btsdn,bsdn->btdn", decay, drive)
        y = torch.einsum("btdn,btn->btd", h, c) + u * self.d_skip
        return self.out_proj(y * F.silu(z))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, D_INNER, STATE, DT_RANK, CONV_KERNEL, SEQ]
