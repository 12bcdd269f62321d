"""fp8 (e4m3fn, e5m2) and bf16 in the language: rounding, promotion, checking and interpretation (issue 46).

Rounding is checked against PyTorch's own conversions, which is what translated models do.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from leir import dtypes, interpreter
from leir.checker import check
from leir.program import load_program
from leir.promotion import promote

TORCH = {"f8e4m3": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2, "bf16": torch.bfloat16}


def _probe() -> np.ndarray:
    rng = np.random.default_rng(1)
    spread = rng.standard_normal(4000) * 10.0 ** rng.integers(-9, 7, 4000)
    edges = [0.0, -0.0, 448.0, 464.0, 465.0, 57344.0, 61440.0, 2.0**-10, 2.0**-9 * 1.5, 2.0**-17, 1e30]
    return np.concatenate([spread, edges, [-e for e in edges], [np.inf, -np.inf]]).astype(np.float32)


@pytest.mark.parametrize("dtype", ["f8e4m3", "f8e5m2", "bf16"])
def test_stores_round_like_pytorch(dtype):
    values = _probe()
    mine = dtypes.cast_to(values, dtype)
    assert mine.dtype == np.float32
    theirs = torch.from_numpy(values).to(TORCH[dtype]).to(torch.float32).numpy()
    same = (mine == theirs) | (np.isnan(mine) & np.isnan(theirs))
    assert same.all(), [(values[i], mine[i], theirs[i]) for i in np.nonzero(~same)[0][:5]]


def test_fp8_facts():
    assert dtypes.is_float("f8e4m3") and dtypes.is_emulated("f8e5m2") and dtypes.is_supported("f8e4m3")
    assert dtypes.dtype_bytes("f8e4m3") == 1 and dtypes.numpy_dtype("f8e5m2") == np.float32
    # e4m3fn has no infinity: its reductions start from the finite extremes
    assert dtypes.min_value("f8e4m3") == -448.0 and dtypes.max_value("f8e5m2") == np.inf
    assert dtypes.exchange_dtype("f8e4m3") == np.dtype(ml_dtypes.float8_e4m3fn)
    assert dtypes.cast_to(np.array([500.0, -np.inf]), "f8e4m3").tolist() == [448.0, -448.0]  # saturates
    assert np.isnan(dtypes.cast_to(np.array([np.nan]), "f8e4m3")[0])
    assert dtypes.cast_to(np.array([1e6]), "f8e5m2")[0] == np.inf


@pytest.mark.parametrize(("a", "b", "joint"), [
    ("f8e4m3", "f8e5m2", "f16"), ("f8e4m3", "bf16", "bf16"), ("f8e5m2", "f32", "f32"),
    ("f8e4m3", "f8e4m3", "f8e4m3"), ("f8e5m2", "i32", "f8e5m2"), ("f16", "bf16", "f32"),
])
def test_promotion_of_fp8(a, b, joint):
    assert promote(a, b) == joint and promote(b, a) == joint


GEMM = """\
input  A: f32[3, 8]
param  W: f8e4m3[4, 8]
param  S: f32[]
output Y: f32[3, 4]
output M: f8e4m3[]
---
L^{3}_{i=0}L^{8}_{k=0}[
  Q^{f8e4m3,g}_{i,k} = A^{f32,g}_{i,k};
];
L^{3}_{i=0}L^{4}_{j=0}L^{8}_{k=0}[
  Y^{f32,g}_{i,j} = Y^{f32,g}_{i,j}+Q^{f8e4m3,g}_{i,k}*W^{f8e4m3,g}_{j,k};
];
L^{3}_{i=0}L^{4}_{j=0}[
  Y^{f32,g}_{i,j} = Y^{f32,g}_{i,j}*S^{f32,g};
];
L^{3}_{i=0}L^{8}_{k=0}[
  M^{f8e4m3,g} = max(M^{f8e4m3,g},Q^{f8e4m3,g}_{i,k});
];
"""


def test_fp8_gemm_is_checked_and_interpreted_exactly():
    program = load_program(GEMM)
    info = check(program)
    assert info.ok, info.errors
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 8)) * 40 - 60).astype(np.float32)  # all negative: the max starts at -448
    w = rng.standard_normal((4, 8)).astype(np.float32)
    out = interpreter.run(program, {"A": a, "W": w, "S": np.float32(0.25)})
    q = a.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    wq = w.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    np.testing.assert_allclose(out["Y"], (q @ wq.T) * 0.25, rtol=1e-6)
    assert out["M"] == q.max() and out["M"] < 0


def test_a_literal_beyond_e4m3fn_is_refused_with_its_position():
    text = GEMM.replace("Q^{f8e4m3,g}_{i,k} = A^{f32,g}_{i,k};", "Q^{f8e4m3,g}_{i,k} = A^{f32,g}_{i,k}+500.0;")
    info = check(load_program(text))
    (diag,) = [d for d in info.errors if d.code == "literal-out-of-range"]
    assert "448" in diag.message and diag.line is not None


def test_strategies_leave_fp8_statements_alone():
    """A temporary hoisted out of (or a SymPy rewrite of) an fp8 statement would round where the
    statement rounds once, on its store: not exact, so neither is offered."""
    from strategies.graph.hoisting import occurrences
    from strategies.math.sympy_bridge import region_of

    text = GEMM.replace("Q^{f8e4m3,g}_{i,k} = A^{f32,g}_{i,k};",
                        "Q^{f8e4m3,g}_{i,k} = exp(A^{f32,g}_{i,k})*exp(A^{f32,g}_{i,k});")
    program = load_program(text)
    assert check(program).ok
    hoisted = {o.stmt_path for o in occurrences(program)}
    assert (0, 0) not in hoisted and any(path[0] == 1 for path in hoisted)  # the f32 GEMM still offers
    bf16 = load_program(text.replace("f8e4m3", "bf16"))
    assert (0, 0) not in {o.stmt_path for o in occurrences(bf16)}
    reason = region_of(program, (0, 0), program.body.blocks[0].items[0])
    assert isinstance(reason, str) and "f8e4m3" in reason
