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

import math
from collections.abc import Mapping
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
    # fp8 carries 3 (e4m3) or 2 (e5m2) mantissa bits: one rounding moves a value by up to 6.25% / 12.5%
    "f8e4m3": (1.25e-1, 1.6e-2),
    "f8e5m2": (2.5e-1, 1.6e-2),
}
#: Smallest normal value of the fp8 types (NumPy's finfo does not know them).
_TINY = {"f8e4m3": 2.0**-6, "f8e5m2": 2.0**-14}
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


#: Elements compared per chunk: every temporary of the comparison is one chunk long (2 MiB in float64),
#: so comparing a 64M-element output costs a few MiB beyond the arrays compared, not ten copies of it.
CHUNK = 1 << 18


def _flat(array: np.ndarray) -> np.ndarray:
    """A flat view of ``array`` where it is contiguous (no copy), else its ``flat`` iterator's array."""
    return array.reshape(-1) if array.flags.c_contiguous else array


def _chunk(array: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Elements ``start:stop`` of ``array`` in row-major order, copying only those (broadcast views too)."""
    if array.ndim == 1:
        return array[start:stop]
    return np.asarray(array.flat[start:stop])


def _broadcast(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as float64 broadcast to ``shape`` (a view: a scalar or a row stays that small)."""
    return _flat(np.broadcast_to(np.asarray(value, dtype=np.float64), shape))


@dataclass
class ScaledAllowance:
    """The ``scaled`` allowance of one output, computed a chunk at a time when ``compare`` asks for it.

    ``errors`` are absolute error bounds (``verifier.error_bound``) of the program under test and of the
    computation of the reference, broadcast to ``expected``'s shape; an infinite bound allows anything
    at that element (the program's error there could not be bounded). Never materialised by ``compare``:
    a 64M-element output's allowance would be another 512 MiB of float64.
    """

    dtype: str
    expected: np.ndarray
    errors: list[np.ndarray]

    def chunk(self, start: int, stop: int) -> np.ndarray:
        """The allowance of flat elements ``start:stop``."""
        u = _unit(self.dtype)
        tiny = _TINY.get(self.dtype) or float(np.finfo(
            np.float16 if self.dtype == "f16" else np.float32 if self.dtype in ("f32", "bf16")
            else np.float64).tiny)
        e = np.abs(_as_float64(_chunk(_flat(np.asarray(self.expected)), start, stop)))
        size = np.where(np.isfinite(e), e, 0.0)
        total = np.zeros(e.shape)
        for err in self.errors:
            total = total + _chunk(_broadcast(err, np.shape(self.expected)), start, stop)
        with np.errstate(over="ignore"):  # a bound near the float64 maximum is unbounded: inf, no warning
            return SAFETY * total + FLOOR_ULPS * u * (size + tiny)

    def array(self) -> np.ndarray:
        """The whole allowance, shaped like ``expected``."""
        out = np.empty(np.shape(self.expected))
        flat = out.reshape(-1)
        for start in range(0, flat.size, CHUNK):
            stop = min(start + CHUNK, flat.size)
            flat[start:stop] = self.chunk(start, stop)
        return out


def scaled_allowance(dtype: str, expected: np.ndarray, errors: list[np.ndarray]) -> np.ndarray:
    """Per-element allowance of the ``scaled`` method from the error bounds of the two computations, as
    an array (``ScaledAllowance`` is the same, chunk by chunk)."""
    return ScaledAllowance(dtype, np.asarray(expected), list(errors)).array()


@dataclass
class _Tally:
    """What ``compare`` keeps of the chunks it has seen: sums, maxima and the worst element so far."""

    max_abs: float = 0.0
    max_rel: float = 0.0
    mismatches: int = 0
    nonfinite: int = 0
    loose: int = 0
    first_bad: int | None = None
    #: worst ratio so far, where (flat index), its error and its allowance; a NaN ratio wins, like argmax
    worst_ratio: float = -1.0
    worst: int | None = None
    error_at_worst: float = 0.0
    bound_at_worst: float = 0.0

    def add(self, start: int, diff: np.ndarray, rel: np.ndarray, bad: np.ndarray, nonfinite_bad: np.ndarray,
            allowed: np.ndarray) -> None:
        self.max_abs = max(self.max_abs, float(diff.max()))
        self.max_rel = max(self.max_rel, float(rel.max()))
        count, nonfinite = int(np.count_nonzero(bad)), int(np.count_nonzero(nonfinite_bad))
        if self.first_bad is None and (count or nonfinite):
            self.first_bad = start + int(np.flatnonzero(bad | nonfinite_bad)[0])
        self.mismatches += count
        self.nonfinite += nonfinite
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(diff == 0.0, 0.0, diff / allowed)
        at = int(np.argmax(ratio))
        value = float(ratio[at])
        if self.worst is None or (not math.isnan(self.worst_ratio)
                                  and (math.isnan(value) or value > self.worst_ratio)):
            self.worst_ratio, self.worst = value, start + at
            self.error_at_worst, self.bound_at_worst = float(diff[at]), float(allowed[at])


def compare(actual: np.ndarray, expected: np.ndarray, dtype: str, *,
            allowance: np.ndarray | ScaledAllowance | None = None,
            magnitude: np.ndarray | None = None) -> Comparison:
    """Compare one output with its reference.

    Without ``allowance`` the ``fixed`` tolerance of the output's dtype applies; with it (an array of
    absolute allowances shaped like ``expected``, or a ``ScaledAllowance``) the ``scaled`` method does.
    ``magnitude`` (``Σ|terms|`` per element) only feeds the report of the worst element. The elements
    are compared ``CHUNK`` at a time (the result is the same as in one pass, to the byte).
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
    flat_a, flat_e = _flat(actual), _flat(expected)
    flat_allow = (None if allowance is None or isinstance(allowance, ScaledAllowance)
                  else _broadcast(allowance, expected.shape))
    tally = _Tally()
    for start in range(0, size, CHUNK):
        stop = min(start + CHUNK, size)
        a_part, e_part = _chunk(flat_a, start, stop), _chunk(flat_e, start, stop)
        if dtype in EXACT_DTYPES:
            _exact_chunk(tally, start, a_part, e_part, dtype)
        else:
            allow_part = (allowance.chunk(start, stop) if isinstance(allowance, ScaledAllowance)
                          else None if flat_allow is None else _chunk(flat_allow, start, stop))
            _float_chunk(tally, start, a_part, e_part, dtype, allow_part)
    if dtype in EXACT_DTYPES:
        return _finish(dtype, rtol, atol, tally, size, method, None, 0.0)
    if allowance is not None:
        rtol, atol = FLOOR_ULPS * _unit(dtype), 0.0
    result = _finish(dtype, rtol, atol, tally, size, method, magnitude, _unit(dtype))
    result.loose_elements = tally.loose
    return result


def _exact_chunk(tally: _Tally, start: int, actual: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    a = actual.astype(np.int64 if dtype != "u64" else np.uint64)
    e = expected.astype(a.dtype)
    bad = a != e
    diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
    rel = diff / np.maximum(np.abs(e.astype(np.float64)), 1.0)
    tally.add(start, diff, rel, bad, np.zeros_like(bad), np.zeros(diff.shape))


def _float_chunk(tally: _Tally, start: int, actual: np.ndarray, expected: np.ndarray, dtype: str,
                 allowance: np.ndarray | None) -> None:
    rtol, atol = tolerance(dtype)
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
    else:
        allowed = np.where(both, allowance, 0.0)
        allowed = np.where(np.isnan(allowed), np.inf, allowed)
    bad = both & (diff > allowed)
    tally.add(start, diff, rel, bad, nonfinite_bad, allowed)
    size_e = np.abs(e_fin)
    tally.loose += int(np.count_nonzero(both & (size_e > 0) & (allowed >= size_e)))


def _unit(dtype: str) -> float:
    from verifier.error_bound import unit_roundoff

    return unit_roundoff(dtype)


def _finish(dtype: str, rtol: float, atol: float, tally: _Tally, size: int, method: str,
            magnitude: np.ndarray | None, unit: float) -> Comparison:
    worst = tally.worst
    count = magnitude_at = None
    if worst is not None and magnitude is not None:
        magnitude_at = float(np.asarray(magnitude).reshape(-1)[worst])
        if magnitude_at > 0 and unit > 0:
            # the error budget expressed as roundings of the worst element's magnitude
            count = float(tally.bound_at_worst / (SAFETY * unit * magnitude_at))
    return Comparison(
        ok=tally.mismatches == 0 and tally.nonfinite == 0,
        dtype=dtype, rtol=rtol, atol=atol,
        max_abs_error=tally.max_abs, max_rel_error=tally.max_rel,
        mismatches=tally.mismatches, nonfinite_mismatches=tally.nonfinite, size=size,
        first_bad_index=tally.first_bad, method=method,
        error_ratio=tally.worst_ratio if worst is not None else 0.0,
        worst_index=worst, error_at_worst=tally.error_at_worst, bound_at_worst=tally.bound_at_worst,
        count_at_worst=count, magnitude_at_worst=magnitude_at,
    )


def compare_outputs(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray],
                    dtypes: dict[str, str], *,
                    allowances: Mapping[str, np.ndarray | ScaledAllowance] | None = None,
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
