"""Models written with einops (as public problem files often are) translate: einops is a dependency so a
file that imports it loads, and its rearrange/reduce/repeat trace to the reshapes they are."""

from __future__ import annotations

import pytest
import torch
from einops import rearrange, reduce, repeat

from .helpers import translate_and_run


class HeadsAttentionScores(torch.nn.Module):
    """Split heads with rearrange, score, merge heads back: the pattern of Mamba/ViT style files."""

    def __init__(self, heads: int):
        super().__init__()
        self.heads = heads

    def forward(self, x):
        q = rearrange(x, "b n (h d) -> b h n d", h=self.heads)
        scores = torch.einsum("bhnd,bhmd->bhnm", q, q).softmax(dim=-1)
        out = torch.einsum("bhnm,bhmd->bhnd", scores, q)
        return rearrange(out, "b h n d -> b n (h d)")


class PoolAndTile(torch.nn.Module):
    """reduce (a mean over patches) and repeat (a broadcast copy)."""

    def forward(self, x):
        pooled = reduce(x, "b c (h p) (w q) -> b c h w", "mean", p=2, q=2)
        return repeat(pooled, "b c h w -> b c h w k", k=3) * 2


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_rearrange_heads_attention(dtype):
    translate_and_run(HeadsAttentionScores(2), [torch.rand(2, 5, 8)], dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_reduce_and_repeat(dtype):
    translation = translate_and_run(PoolAndTile(), [torch.rand(2, 3, 4, 6)], dtype)
    (out,) = [d for d in translation.program.signature.tensors if d.role == "output"]
    assert tuple(out.shape) == (2, 3, 2, 3, 3)
