"""The re-check of the timed binary: outputs identical to the reference's need no error bound (it only
decides this check, and can take minutes to evaluate); any others are held to the tolerance as before.

``max_bound_iterations=0`` makes every bound evaluation fall back to the fixed tolerance with a note, so
the note says whether the re-check evaluated a bound at all.
"""

from __future__ import annotations

import numpy as np

from leir.program import load_program
from verifier.verify_job import JobSpec, _timed_outputs_ok

SUM = load_program("input A: f32[8, 64]\noutput C: f32[8]\n---\n"
                   "B^{8}_{tx=0}L^{64}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a};];")
NOT_EVALUATED = "error bound not evaluated"


def _spec() -> JobSpec:
    return JobSpec(program=SUM, parent=SUM, source=None, target="llvm", seed=0, special_values=False,
                    time=True, run=True, reference=None, params={}, shapes={}, max_bound_iterations=0)


def _check(timed: np.ndarray, expected: np.ndarray) -> tuple[bool, list[str]]:
    notes: list[str] = []
    arrays = {"A": np.ones((8, 64), np.float32)}
    ok = _timed_outputs_ok(_spec(), None, "parent", {"C": timed}, {"C": expected}, arrays, notes, None)
    return ok, notes


def test_bitwise_identical_outputs_pass_without_a_bound():
    expected = np.linspace(-3, 3, 8).astype(np.float32)
    ok, notes = _check(expected.copy(), expected)
    assert ok and not any(NOT_EVALUATED in n for n in notes)


def test_outputs_off_by_a_rounding_are_held_to_the_tolerance():
    expected = np.linspace(-3, 3, 8).astype(np.float32)
    ok, notes = _check(np.nextafter(expected, np.float32(np.inf)), expected)
    assert ok and any(NOT_EVALUATED in n for n in notes)


def test_wrong_outputs_fail():
    expected = np.linspace(-3, 3, 8).astype(np.float32)
    ok, _notes = _check(expected + 1, expected)
    assert not ok


def test_a_missing_output_fails():
    notes: list[str] = []
    expected = np.zeros(8, np.float32)
    assert not _timed_outputs_ok(_spec(), None, "parent", {}, {"C": expected}, {}, notes, None)
