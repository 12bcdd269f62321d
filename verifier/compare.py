"""Dtype-aware comparison of a program's outputs with a reference, and bitwise equality with a parent.

Tolerances (``TOLERANCES``) are per element dtype: an element passes when
``|actual - expected| <= atol + rtol * |expected|`` (numpy's ``isclose`` rule). On top of that,
non-finite values must sit in exactly the same positions with exactly the same kind: a NaN where the
reference has NaN, ``+inf`` where it has ``+inf``. That is stricter than the public reference checker,
which OR-ed three lenient tolerances and so let a NaN-producing rewrite of an overflow-free program
through. Integer and bool outputs must be exactly equal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

#: (rtol, atol) per LEIR dtype. f16/bf16 carry 10 and 7 mantissa bits, so a rewrite that reorders a
#: reduction legitimately moves results by a few ulps of the largest partial sum.
TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-9, 1e-12),
    "f32": (1e-4, 1e-5),
    "f16": (1e-2, 1e-3),
    "bf16": (5e-2, 1e-2),
}
EXACT_DTYPES = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"})


@dataclass
class Comparison:
    """The comparison of one output tensor."""

    ok: bool
    dtype: str
    rtol: float
    atol: float
    max_abs_error: float
    max_rel_error: float
    #: Finite elements outside the tolerance.
    mismatches: int
    #: Elements where the non-finite pattern (NaN, +inf, -inf) differs.
    nonfinite_mismatches: int
    size: int
    shape_ok: bool = True
    #: The first offending flat index, to point a reviewer at it.
    first_bad_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) used for ``dtype``; exact dtypes get (0, 0)."""
    if dtype in EXACT_DTYPES:
        return 0.0, 0.0
    try:
        return TOLERANCES[dtype]
    except KeyError:
        raise ValueError(f"no tolerance defined for dtype {dtype!r}") from None


def _as_float64(array: np.ndarray) -> np.ndarray:
    """Widen to f64 for the arithmetic of the comparison (bf16 via ml_dtypes casts fine)."""
    return np.asarray(array).astype(np.float64)


def compare(actual: np.ndarray, expected: np.ndarray, dtype: str) -> Comparison:
    """Compare one output with its reference using the tolerance of the output's LEIR dtype."""
    rtol, atol = tolerance(dtype)
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return Comparison(False, dtype, rtol, atol, float("inf"), float("inf"), int(expected.size), 0,
                          int(expected.size), shape_ok=False)
    size = int(expected.size)
    if size == 0:
        return Comparison(True, dtype, rtol, atol, 0.0, 0.0, 0, 0, 0)
    if dtype in EXACT_DTYPES:
        a = actual.astype(np.int64 if dtype != "u64" else np.uint64)
        e = expected.astype(a.dtype)
        bad = a != e
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        rel = diff / np.maximum(np.abs(e.astype(np.float64)), 1.0)
        return _finish(dtype, rtol, atol, diff, rel, bad, np.zeros_like(bad), size)
    a = _as_float64(actual)
    e = _as_float64(expected)
    fin_a, fin_e = np.isfinite(a), np.isfinite(e)
    both = fin_a & fin_e
    # Non-finite pattern: same finiteness, and where not finite, the same value class.
    nonfinite_bad = (fin_a != fin_e) | (~fin_a & ~fin_e & ~(
        (np.isnan(a) & np.isnan(e)) | (np.isposinf(a) & np.isposinf(e)) | (np.isneginf(a) & np.isneginf(e))))
    a_fin, e_fin = np.where(both, a, 0.0), np.where(both, e, 0.0)
    diff = np.abs(a_fin - e_fin)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(diff == 0.0, 0.0, diff / np.maximum(np.abs(e_fin), np.finfo(np.float64).tiny))
    bad = both & (diff > atol + rtol * np.abs(e_fin))
    return _finish(dtype, rtol, atol, diff, rel, bad, nonfinite_bad, size)


def _finish(dtype, rtol, atol, diff, rel, bad, nonfinite_bad, size) -> Comparison:
    mismatches = int(np.count_nonzero(bad))
    nonfinite = int(np.count_nonzero(nonfinite_bad))
    any_bad = bad | nonfinite_bad
    first = int(np.flatnonzero(any_bad)[0]) if (mismatches or nonfinite) else None
    return Comparison(
        ok=mismatches == 0 and nonfinite == 0,
        dtype=dtype, rtol=rtol, atol=atol,
        max_abs_error=float(diff.max()) if diff.size else 0.0,
        max_rel_error=float(rel.max()) if rel.size else 0.0,
        mismatches=mismatches, nonfinite_mismatches=nonfinite, size=size, first_bad_index=first,
    )


def compare_outputs(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray],
                    dtypes: dict[str, str]) -> dict[str, Comparison]:
    """Compare every output named in ``dtypes``; a missing output is a failed comparison."""
    results: dict[str, Comparison] = {}
    for name, dtype in dtypes.items():
        if name not in actual or name not in expected:
            rtol, atol = tolerance(dtype)
            results[name] = Comparison(False, dtype, rtol, atol, float("inf"), float("inf"), 0, 0, 0,
                                       shape_ok=False)
            continue
        results[name] = compare(actual[name], expected[name], dtype)
    return results


def bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Byte-for-byte identity (NaN payloads and signed zeros included) — the ``equal_pass`` test."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def outputs_bitwise_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(bitwise_equal(a[k], b[k]) for k in a)
