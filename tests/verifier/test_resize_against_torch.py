"""Translated bicubic and trilinear resizes verify against PyTorch (issue 45, item 2).

PyTorch computes each resize's source coordinates and cubic coefficients in the input dtype's arithmetic
(float for f32); the translation used to compute its weights in float64, which differ by up to
``u·|coordinate|``: correct bicubic programs failed at 2.5-7.7× their bound (align_corners, non-integer
scales) and trilinear ones at 14-170× from coordinates of 64 on. Real TVM builds against the PyTorch
file itself, at a few small sizes; ``bench/resize.py`` runs the large ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.reference import TorchSourceReference
from verifier.result import Outcome
from verifier.verify import verify

SOURCE = Path(__file__).resolve().parent / "sources" / "resize.py"


def _verify(sets: dict):
    from frontend.translate import translate_file

    translation = translate_file(SOURCE, sets=sets, dtype="f32")
    reference = TorchSourceReference(SOURCE, sets, "f32")
    return verify(translation.program, reference=reference, params=translation.values, cache=False)


@pytest.mark.parametrize("sets", [
    {"SCALE": 2.0},
    {"SCALE": 2.0, "ALIGN": 1},  # failed at 2.5x its bound
    {"SCALE": 3.0, "DEPTH": 8, "SIDE": 8},  # 3.4x
    {"SCALE": 2.5, "ALIGN": 1, "DEPTH": 7, "SIDE": 5},
    {"SCALE": 1.7, "DEPTH": 4, "SIDE": 150},
], ids=str)
def test_bicubic_upsampling_passes_against_pytorch(sets: dict):
    result = _verify({"MODE": "bicubic", **sets})
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.tolerance == "scaled" and result.max_error_ratio <= 1.0


@pytest.mark.parametrize("sets", [
    {"SCALE": 2.0, "SIDE": 8},
    {"SCALE": 1.5, "SIDE": 64},  # failed at 14x its bound
    {"SCALE": 2.0, "SIDE": 96, "ALIGN": 1},  # 17x at 128
    {"SCALE": 0.6, "SIDE": 100, "DEPTH": 8},
], ids=str)
def test_trilinear_resizing_passes_against_pytorch(sets: dict):
    result = _verify({"MODE": "trilinear", "CHANNELS": 1, **sets})
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.tolerance == "scaled" and result.max_error_ratio <= 1.0
