"""A w4a16-style GEMM (issue 46): int4 weights packed two per byte in a uint8 parameter, unpacked with
``& 0xF`` and ``>> 4``, offset by the zero point 8, scaled per output row, then multiplied."""

import torch
import torch.nn as nn

N = 4
IN = 32
OUT = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        nibbles = torch.randint(0, 16, (OUT, IN), dtype=torch.uint8)
        self.packed = nn.Parameter(nibbles[:, 0::2] | (nibbles[:, 1::2] << 4), requires_grad=False)
        self.scale = nn.Parameter(torch.rand(OUT, 1) * 0.1 + 0.01, requires_grad=False)

    def forward(self, x):
        low = self.packed & 0xF
        high = self.packed >> 4
        q = torch.stack([low, high], dim=-1).reshape(OUT, IN)
        weight = (q.to(x.dtype) - 8) * self.scale
        return x @ weight.t()


def get_inputs():
    return [torch.randn(N, IN)]


def get_init_inputs():
    return []
