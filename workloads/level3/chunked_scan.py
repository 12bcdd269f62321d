# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""A chunked linear scan (Mamba-2 SSD style) of h_t = a_t * h_{t-1} + x_t per channel: inside each chunk
the decays exp(segment sums of log a) form a lower-triangular matrix, across chunks the carried state is
decayed and added — the same values as the sequential recurrence, computed chunk by chunk."""

import torch
import torch.nn as nn

BATCH = 2
SEQ = 16
CHANNELS = 8
CHUNK = 4

STEPTP = {
    "name": "chunked_scan",
    "level": 3,
    "tags": ["llm", "scan", "ssm", "chunked", "recurrence", "cumsum", "mask"],
    "ops": ["sigmoid", "log", "view", "cumsum", "unsqueeze", "sub", "exp", "mul", "sum", "getitem", "cat",
            "masked_fill"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 8, "SEQ": 4096, "CHANNELS": 4096, "CHUNK": 64},
    "description": "a = sigmoid(a_logit); per chunk y = L x + exp(cumsum log a) h_prev with "
    "L_ij = exp(cs_i - cs_j) for i >= j; h carried across chunks.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("upper", torch.triu(torch.ones(CHUNK, CHUNK, dtype=torch.bool), diagonal=1))

    def forward(self, x, a_logit):
        log_a = torch.log(torch.sigmoid(a_logit))
        h = torch.zeros(BATCH, 1, CHANNELS, dtype=x.dtype)
        outs = []
        for start in range(0, SEQ, CHUNK):
            xc = x[:, start:start + CHUNK]
            cs = torch.cumsum(log_a[:, start:start + CHUNK], dim=1)
            seg = (cs.unsqueeze(2) - cs.unsqueeze(1)).masked_fill(self.upper[None, :, :, None], float("-inf"))
            y = (torch.exp(seg) * xc.unsqueeze(1)).sum(dim=2) + torch.exp(cs) * h
            outs.append(y)
            h = y[:, -1:]
        return torch.cat(outs, dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ, CHANNELS), torch.randn(BATCH, SEQ, CHANNELS)]


def get_init_inputs():
    return []
