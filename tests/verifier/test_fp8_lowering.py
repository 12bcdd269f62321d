"""fp8 tensors lower to bytes with exact conversions, and fp8 GEMMs verify against PyTorch (issue 46).

TVM 0.27's own float8 casts on llvm decode 0 as 2^-7 and wrap overflows, so the lowering converts with
integer arithmetic (``verifier.fp8_ops``); these tests build real kernels and compare every one of the
256 bytes with ``ml_dtypes`` and thousands of floats (subnormals, ties, overflow, inf, NaN) with PyTorch.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

from leir.program import dump_program, load_program
from verifier.build import build
from verifier.reference import TorchSourceReference
from verifier.result import Outcome
from verifier.verify import verify

SOURCES = Path(__file__).resolve().parent / "sources"
ML = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}
TORCH = {"f8e4m3": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2}

ROUND_TRIP = """\
input  A: {dt}[256]
input  F: f32[{n}]
output B: f32[256]
output C: {dt}[{n}]
---
L^{{256}}_{{i=0}}[
  B^{{f32,g}}_{{i}} = A^{{{dt},g}}_{{i}};
];
L^{{{n}}}_{{i=0}}[
  C^{{{dt},g}}_{{i}} = F^{{f32,g}}_{{i}};
];
"""


def _floats(dtype: str) -> np.ndarray:
    """Floats meeting every case of the rounding: each fp8 value, the midpoints between neighbours
    (ties to even) and points just beside them, subnormals, overflow, inf and NaN, both signs."""
    values = np.arange(256, dtype=np.uint8).view(ML[dtype]).astype(np.float64)
    finite = np.unique(values[np.isfinite(values)])
    mids = (finite[1:] + finite[:-1]) / 2
    edge = finite.max() * np.array([1.03, 1.0625, 1.07, 2.0, 1e6])
    rng = np.random.default_rng(0)
    spread = rng.standard_normal(1000) * 10.0 ** rng.integers(-8, 6, 1000)
    out = np.concatenate([finite, mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                          np.nextafter(mids.astype(np.float32), np.float32(-np.inf)), edge, -edge, spread,
                          [np.inf, -np.inf, np.nan, 1e-30, -1e-30, 0.0, -0.0]])
    return out.astype(np.float32)


@pytest.mark.parametrize("dtype", ["f8e4m3", "f8e5m2"])
def test_fp8_conversions_in_the_kernel_match_ml_dtypes(dtype):
    floats = _floats(dtype)
    program = load_program(ROUND_TRIP.format(dt=dtype, n=floats.size))
    kernel = build(program)
    bytes_ = np.arange(256, dtype=np.uint8).view(ML[dtype]).astype(np.float32)
    got = kernel.run({"A": bytes_, "F": floats})
    np.testing.assert_array_equal(got["B"], bytes_)  # NaN == NaN here; signs of zero below
    assert np.array_equal(np.signbit(got["B"]), np.signbit(bytes_))
    want = torch.from_numpy(floats).to(TORCH[dtype]).to(torch.float32).numpy()  # saturating e4m3fn
    have = got["C"]
    assert have.dtype == np.float32
    same = (have == want) | (np.isnan(have) & np.isnan(want))
    assert same.all(), [(floats[i], want[i], have[i]) for i in np.nonzero(~same)[0][:5]]
    assert np.array_equal(np.signbit(have), np.signbit(want))


@pytest.mark.parametrize("fmt", [0, 1], ids=["e4m3fn", "e5m2"])
def test_fp8_gemm_with_scales_matches_pytorch(fmt):
    from frontend.translate import translate_file

    source, sets = SOURCES / "fp8_gemm.py", {"FORMAT": fmt}
    translation = translate_file(source, sets=sets)
    dtypes = {d.name: d.dtype for d in translation.program.signature.tensors}
    assert ("f8e4m3", "f8e5m2")[fmt] in dtypes.values()  # the weight stays fp8
    reference = TorchSourceReference(source, sets, "f32")
    result = verify(translation.program, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.max_abs_error == 0.0  # the same quantisation, then f32 arithmetic in the same order


def test_an_fp8_gemm_missing_its_weight_scale_fails():
    from frontend.translate import translate_file

    source = SOURCES / "fp8_gemm.py"
    translation = translate_file(source)
    text = dump_program(translation.program)
    scale = next(d.name for d in translation.program.signature.tensors if d.role == "param" and not d.shape)
    product = next(line for line in text.splitlines() if f"*{scale}^{{f32,g}}" in line)
    wrong = load_program(text.replace(product, product.replace(f"*{scale}^{{f32,g}}", "")))
    reference = TorchSourceReference(source, {}, "f32")
    result = verify(wrong, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.FAIL, result.summary()


def test_fp8_and_bf16_programs_have_token_counts_with_cuda():
    """Token counts lower for cuda: fp8 bytes and their conversions, and bf16, generate CUDA C."""
    from frontend.translate import translate_file
    from verifier.tokens import program_tokens

    for source, dtype in (("fp8_gemm.py", "f32"), ("bf16_mlp.py", "bf16")):
        counts = program_tokens(translate_file(SOURCES / source, dtype=dtype).program)
        assert counts.tir_target == "cuda" and counts.cuda is not None, counts.note
        assert 0 < counts.leir < counts.tir


def test_a_bf16_read_stored_into_fp8_rounds_as_pytorch_does():
    """Issue 46 (level 3 in bf16): an fp8 store of a bf16 read built, ran and was wrong on every element."""
    program = load_program(
        "input  A: bf16[4, 32]\noutput H: f8e4m3[4, 32]\n---\n"
        "B^{4}_{tx=0}L^{32}_{a=0}[\n  H^{f8e4m3,g}_{tx,a} = A^{bf16,g}_{tx,a}*2;\n];\n")
    torch.manual_seed(0)
    a = torch.randn(4, 32).to(torch.bfloat16)
    got = build(program, "llvm").run({"A": a.float().numpy().astype(ml_dtypes.bfloat16)})["H"]
    want = (a.float() * 2).to(torch.float8_e4m3fn).float().numpy()
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), want)
