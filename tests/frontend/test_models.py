"""Whole-model patterns met in public level3 problems: small modules of our own that use them, translated,
checked, run by the LEIR interpreter and compared with eager PyTorch in f64 and f32."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from frontend.errors import UnsupportedOperatorError

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


class Encoder(nn.Module):
    """Stacked ``nn.TransformerEncoderLayer``s (fx leaves) with an optional final norm, as ViT-style models use."""

    def __init__(self, norm_first: bool, batch_first: bool, activation: str, layers: int) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=12, dropout=0.0,
                                           activation=activation, batch_first=batch_first, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, norm=nn.LayerNorm(8) if layers > 1 else None,
                                             enable_nested_tensor=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)


class EncoderLayer(nn.Module):
    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=8, nhead=4, dim_feedforward=16, dropout=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("norm_first", "batch_first", "activation", "layers"),
                         [(False, False, "relu", 1), (True, True, "gelu", 2)])
def test_transformer_encoder(dtype, norm_first, batch_first, activation, layers):
    translate_and_run(Encoder(norm_first, batch_first, activation, layers), [rand(3, 5, 8)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transformer_encoder_layer_in_training_mode_without_dropout(dtype):
    translate_and_run(EncoderLayer(), [rand(4, 2, 8)], dtype)


def test_transformer_encoder_layer_with_live_dropout_is_refused():
    with pytest.raises(UnsupportedOperatorError, match="TransformerEncoderLayer.*dropout"):
        translate_and_run(EncoderLayer(dropout=0.1), [rand(4, 2, 8)], "f64")


class DeepBidirectional(nn.Module):
    """Two-layer bidirectional LSTM and GRU (layer 2 reads ``[forward, backward]`` of layer 1) with h0/c0."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(8, 2, num_layers=3, bidirectional=True)

    def forward(self, x, h0, c0):
        out, (h_n, c_n) = self.lstm(x, (h0, c0))
        seq, g_n = self.gru(out.transpose(0, 1))
        return seq, g_n, h_n, c_n


@pytest.mark.parametrize("dtype", DTYPES)
def test_multilayer_bidirectional_lstm_and_gru(dtype):
    translate_and_run(DeepBidirectional(), [rand(2, 3, 3), rand(4, 2, 4, seed=1), rand(4, 2, 4, seed=2)], dtype)
