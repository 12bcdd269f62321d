"""On large-offset inputs, a rewrite must be about as accurate as the program it claims to equal.

Why not the error bound alone: on inputs like ``1000 + N(0, 1)`` the worst-case rounding bound of a
correct two-pass layer norm is already ~0.15 in f32 (the mean of 1,024 values near 1000 may, in the worst
case, be off by 0.06), while its actual error is ~6e-4; a rewrite that expands the variance into
``E[x^2] - E[x]^2`` cancels catastrophically (error ~6e-2) and still sits inside that bound — and its own
bound is unbounded, which the scaled tolerance reads as "anything goes". Both bounds are honest, and
neither can tell the two programs apart.

What can: the actual errors. The trusted program evaluated in float64 (``verifier.error_bound``'s
``value``, the exact result up to f64 rounding) is the yardstick; the program under test fails when its
largest error against it exceeds ``ACCURACY_FACTOR`` times the trusted program's own largest error
(the reference's outputs, on the same inputs), plus ``FLOOR_ULPS`` units in the last place of the largest
exact value, so two programs that are both good to a few ulps never fail on noise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from verifier.compare import FLOOR_ULPS
from verifier.error_bound import unit_roundoff

#: A rewrite may lose this many times the trusted program's accuracy (reassociating a sum moves its
#: error by a small factor either way; catastrophic cancellation by orders of magnitude: 100x above).
ACCURACY_FACTOR = 8.0


@dataclass(frozen=True)
class Accuracy:
    """One float output: the largest errors of the program and of the trusted computation vs f64."""

    name: str
    error: float
    trusted_error: float
    allowed: float

    @property
    def ok(self) -> bool:
        return self.error <= self.allowed

    def reason(self) -> str:
        return (f"{self.name}: error {self.error:.3g} against the trusted program's float64 value, "
                f"{self.error / max(self.trusted_error, 1e-300):.3g}x the trusted program's own "
                f"{self.trusted_error:.3g} (allowed {self.allowed:.3g} = {ACCURACY_FACTOR:g}x + "
                f"{FLOOR_ULPS:g} ulps)")


def _largest_error(actual: np.ndarray, exact: np.ndarray) -> float:
    a, e = np.asarray(actual).astype(np.float64), np.asarray(exact).astype(np.float64)
    finite = np.isfinite(a) & np.isfinite(e)
    if not finite.any():
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.max(np.abs(a[finite] - e[finite])))


def accuracy(outputs: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray],
             exact: Mapping[str, np.ndarray], dtypes: Mapping[str, str]) -> list[Accuracy]:
    """Per float output present in all three: the errors of ``outputs`` and ``expected`` vs ``exact``.

    Non-finite elements (in either) are left to the ordinary comparison, which compares them by class.
    """
    found = []
    for name, dtype in dtypes.items():
        present = all(name in m for m in (outputs, expected, exact))
        if dtype not in ("f16", "bf16", "f32", "f64") or not present:
            continue
        truth = np.asarray(exact[name]).astype(np.float64)
        size = np.abs(truth[np.isfinite(truth)])
        floor = FLOOR_ULPS * unit_roundoff(dtype) * (float(size.max()) if size.size else 0.0)
        trusted_error = _largest_error(expected[name], truth)
        found.append(Accuracy(name, _largest_error(outputs[name], truth), trusted_error,
                              ACCURACY_FACTOR * trusted_error + floor))
    return found
