"""Comparison of a program's outputs with a reference, and bitwise equality with a parent.

Two tolerance methods (docs/verification.md derives both):

* ``scaled`` (what ``verifier.verify`` uses whenever it can evaluate the program): each element gets its
  own allowance, ``SAFETY * (E_program + E_reference) + FLOOR_ULPS * u * (|expected| + tiny)``, where the
  ``E`` are the per-element rounding-error bounds of ``verifier.error_bound`` (they grow with the number
  of roundings and the magnitude ``Σ|terms|`` of what was combined) and ``u`` is the unit roundoff of the
  output's dtype — a long reduction is allowed what it can legitimately lose, a short computation only
  a few ulps;
* ``fixed`` (the fallback when the program is too large to evaluate, and the rule of ``compare`` called
  without allowances): per dtype (``TOLERANCES``), ``|actual - expected| <= atol + rtol * |expected|``.

Under both, non-finite values must sit in exactly the same positions with exactly the same kind: a NaN
where the reference has NaN, ``+inf`` where it has ``+inf``. That is stricter than the public reference
checker, which OR-ed three lenient tolerances and so let a NaN-producing rewrite of an overflow-free
program through. Integer and bool outputs must be exactly equal.
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
#: Multiplies the sum of the two error bounds: room for the second-order terms the first-order rules
#: drop, and for a reference (PyTorch) whose formula rounds a little differently from the LEIR program's.
SAFETY = 2.0
#: Every element may differ by this many units of roundoff of its own size (one correctly rounded
#: result either side, twice): the allowance of a computation with next to no roundings.
FLOOR_ULPS = 4.0
#: Version of the comparison rule, part of the result cache key: a changed rule must not serve old results.
RULE_VERSION = "scaled-3"  # 2: ±inf in special values, the f64 rule against PyTorch, IEEE-safe lowering;
#: 3: the underflow term η of every rounding below the normal range (issue 45)


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
    #: ``scaled`` (per-element error bound) or ``fixed`` (per-dtype rtol/atol); ``exact`` for ints/bools.
    method: str = "fixed"
    #: The largest ratio |actual - expected| / allowance over the finite elements (<= 1 passes), the
    #: element where it is reached, and that element's error and allowance.
    error_ratio: float = 0.0
    worst_index: int | None = None
    error_at_worst: float = 0.0
    bound_at_worst: float = 0.0
    #: Effective number of roundings (bound / (u * magnitude)) and magnitude Σ|terms| at that element.
    count_at_worst: float | None = None
    magnitude_at_worst: float | None = None
    #: Non-zero finite elements whose allowance is at least their own size (the bound says little there:
    #: e.g. ``exp`` of a huge-magnitude argument); only the NaN/inf pattern really checks them.
    loose_elements: int = 0

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


def scaled_allowance(dtype: str, expected: np.ndarray, errors: list[np.ndarray]) -> np.ndarray:
    """Per-element allowance of the ``scaled`` method from the error bounds of the two computations.

    ``errors`` are absolute error bounds (``verifier.error_bound``) of the program under test and of the
    computation of the reference, broadcast to ``expected``'s shape; an infinite bound allows anything
    at that element (the program's error there could not be bounded).
    """
    u = _unit(dtype)
    e = np.abs(_as_float64(expected))
    size = np.where(np.isfinite(e), e, 0.0)
    tiny = float(np.finfo(np.float16 if dtype == "f16" else np.float32 if dtype in ("f32", "bf16")
                          else np.float64).tiny)
    total = np.zeros(e.shape)
    for err in errors:
        total = total + np.broadcast_to(np.asarray(err, dtype=np.float64), e.shape)
    with np.errstate(over="ignore"):  # a bound near the float64 maximum is unbounded: inf, no warning
        return SAFETY * total + FLOOR_ULPS * u * (size + tiny)


def compare(actual: np.ndarray, expected: np.ndarray, dtype: str, *,
            allowance: np.ndarray | None = None, magnitude: np.ndarray | None = None) -> Comparison:
    """Compare one output with its reference.

    Without ``allowance`` the ``fixed`` tolerance of the output's dtype applies; with it (an array of
    absolute allowances shaped like ``expected``, see ``scaled_allowance``) the ``scaled`` method does.
    ``magnitude`` (``Σ|terms|`` per element) only feeds the report of the worst element.
    """
    rtol, atol = tolerance(dtype)
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    method = "exact" if dtype in EXACT_DTYPES else ("scaled" if allowance is not None else "fixed")
    if actual.shape != expected.shape:
        return Comparison(False, dtype, rtol, atol, float("inf"), float("inf"), int(expected.size), 0,
                          int(expected.size), shape_ok=False, method=method, error_ratio=float("inf"))
    size = int(expected.size)
    if size == 0:
        return Comparison(True, dtype, rtol, atol, 0.0, 0.0, 0, 0, 0, method=method)
    if dtype in EXACT_DTYPES:
        a = actual.astype(np.int64 if dtype != "u64" else np.uint64)
        e = expected.astype(a.dtype)
        bad = a != e
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        rel = diff / np.maximum(np.abs(e.astype(np.float64)), 1.0)
        return _finish(dtype, rtol, atol, diff, rel, bad, np.zeros_like(bad), size, method,
                       np.zeros(diff.shape), None, 0.0)
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
    if allowance is None:
        allowed = atol + rtol * np.abs(e_fin)
        rtol_used, atol_used = rtol, atol
    else:
        allowed = np.where(both, np.broadcast_to(np.asarray(allowance, dtype=np.float64), e.shape), 0.0)
        allowed = np.where(np.isnan(allowed), np.inf, allowed)
        rtol_used, atol_used = FLOOR_ULPS * _unit(dtype), 0.0
    bad = both & (diff > allowed)
    result = _finish(dtype, rtol_used, atol_used, diff, rel, bad, nonfinite_bad, size, method, allowed,
                     magnitude, _unit(dtype))
    size_e = np.abs(e_fin)
    result.loose_elements = int(np.count_nonzero(both & (size_e > 0) & (allowed >= size_e)))
    return result


def _unit(dtype: str) -> float:
    from verifier.error_bound import unit_roundoff

    return unit_roundoff(dtype)


def _finish(dtype: str, rtol: float, atol: float, diff: np.ndarray, rel: np.ndarray, bad: np.ndarray,
            nonfinite_bad: np.ndarray, size: int, method: str, allowed: np.ndarray,
            magnitude: np.ndarray | None, unit: float) -> Comparison:
    mismatches = int(np.count_nonzero(bad))
    nonfinite = int(np.count_nonzero(nonfinite_bad))
    any_bad = bad | nonfinite_bad
    first = int(np.flatnonzero(any_bad)[0]) if (mismatches or nonfinite) else None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0.0, 0.0, diff / allowed)
    worst = int(np.argmax(ratio)) if ratio.size else None
    flat_allowed = np.asarray(allowed).reshape(-1)
    count = magnitude_at = None
    if worst is not None and magnitude is not None:
        magnitude_at = float(np.asarray(magnitude).reshape(-1)[worst])
        if magnitude_at > 0 and unit > 0:
            # the error budget expressed as roundings of the worst element's magnitude
            count = float(flat_allowed[worst] / (SAFETY * unit * magnitude_at))
    return Comparison(
        ok=mismatches == 0 and nonfinite == 0,
        dtype=dtype, rtol=rtol, atol=atol,
        max_abs_error=float(diff.max()) if diff.size else 0.0,
        max_rel_error=float(rel.max()) if rel.size else 0.0,
        mismatches=mismatches, nonfinite_mismatches=nonfinite, size=size, first_bad_index=first,
        method=method,
        error_ratio=float(ratio.reshape(-1)[worst]) if worst is not None else 0.0,
        worst_index=worst,
        error_at_worst=float(diff.reshape(-1)[worst]) if worst is not None else 0.0,
        bound_at_worst=float(flat_allowed[worst]) if worst is not None else 0.0,
        count_at_worst=count, magnitude_at_worst=magnitude_at,
    )


def compare_outputs(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray],
                    dtypes: dict[str, str], *, allowances: dict[str, np.ndarray] | None = None,
                    magnitudes: dict[str, np.ndarray] | None = None) -> dict[str, Comparison]:
    """Compare every output named in ``dtypes``; a missing output is a failed comparison.

    Outputs named in ``allowances`` are held to those per-element allowances (``scaled``), the others to
    the ``fixed`` tolerance of their dtype.
    """
    allowances = allowances or {}
    magnitudes = magnitudes or {}
    results: dict[str, Comparison] = {}
    for name, dtype in dtypes.items():
        if name not in actual or name not in expected:
            rtol, atol = tolerance(dtype)
            results[name] = Comparison(False, dtype, rtol, atol, float("inf"), float("inf"), 0, 0, 0,
                                       shape_ok=False, error_ratio=float("inf"))
            continue
        results[name] = compare(actual[name], expected[name], dtype, allowance=allowances.get(name),
                                magnitude=magnitudes.get(name))
    return results


def bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Byte-for-byte identity (NaN payloads and signed zeros included) — the ``equal_pass`` test."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def outputs_bitwise_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(bitwise_equal(a[k], b[k]) for k in a)
