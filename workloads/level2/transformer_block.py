# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Pre-norm GPT block: LN, causal MHA, residual, LN, GELU MLP, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 16
EMBED = 64
HEADS = 4
HIDDEN = 128

STEPTP = {
    "name": "transformer_block",
    "level": 2,
    "tags": ["attention", "mha", "causal", "normalization", "layer_norm", "gemm", "mlp", "residual"],
    "ops": [
        "layer_norm",
        "linear",
        "split",
        "view",
        "transpose",
        "scaled_dot_product_attention",
        "contiguous",
        "gelu",
        "add",
    ],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 16, "SEQ": 1024, "EMBED": 768, "HEADS": 12, "HIDDEN": 3072},
    "description": "x + attn(ln1(x)); then + mlp(ln2(.)) with a fused qkv projection and tanh-GELU MLP.",
}


class Model(nn.Module):
    def __init__(self, embed, heads, hidden):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(embed)
        self.qkv = nn.Linear(embed, 3 * embed)
        self.proj = nn.Linear(embed, embed)
        self.ln2 = nn.LayerNorm(embed)
        self.fc = nn.Linear(embed, hidden)
        self.fc_out = nn.Linear(hidden, embed)

    def forward(self, x):
        head_dim = EMBED // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(EMBED, dim=2)
        q = q.view(BATCH, SEQ, self.heads, head_dim).transpose(1, 2)
        k = k.view(BATCH, SEQ, self.heads, head_dim).transpose(1, 2)
        v = v.view(BATCH, SEQ, self.heads, head_dim).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(BATCH, SEQ, EMBED)
        x = x + self.proj(y)
        return x + self.fc_out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED)]


def get_init_inputs():
    return [EMBED, HEADS, HIDDEN]
