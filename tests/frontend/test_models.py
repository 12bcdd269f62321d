"""Whole-model patterns met in public level3 problems: small modules of our own that use them, translated,
checked, run by the LEIR interpreter and compared with eager PyTorch in f64 and f32."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from .helpers import translate_and_run

DTYPES = ["f64", "f32"]


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g, dtype=torch.float64)


class PatchTokens(nn.Module):
    """Vision-transformer patch embedding written with ``Tensor.unfold`` (non-square, uneven patches)."""

    def __init__(self, patch: tuple[int, int], dim: int) -> None:
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(3 * patch[0] * patch[1], dim)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        ph, pw = self.patch
        x = img.unfold(2, ph, ph).unfold(3, pw, pw)  # (B, C, H/ph, W/pw, ph, pw)
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(img.shape[0], -1, 3 * ph * pw)
        return self.proj(x)


class OverlappingWindows(nn.Module):
    """``unfold`` with a step smaller than the window (overlap) along a negative dimension, then a reduction."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.unfold(-1, 3, 2).amax(dim=-1)


class Im2colConv(nn.Module):
    """A convolution written as im2col (``F.unfold`` with padding, stride and dilation) plus a matmul."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(rand(5, 2 * 3 * 2, seed=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cols = F.unfold(x, kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))
        return self.weight @ cols


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_unfold_patch_embedding(dtype):
    translate_and_run(PatchTokens((2, 3), 8), [rand(2, 3, 4, 9)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_unfold_overlapping_windows(dtype):
    translate_and_run(OverlappingWindows(), [rand(2, 4, 9)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_im2col_with_padding_stride_dilation(dtype):
    translate_and_run(Im2colConv(), [rand(2, 2, 7, 6)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unfold_module_unbatched(dtype):
    translate_and_run(nn.Unfold(kernel_size=2, stride=2), [rand(3, 4, 6)], dtype)
