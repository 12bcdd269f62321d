"""Dtype-aware comparison: per-dtype tolerances, exact ints/bools, strict NaN/inf, bitwise equality."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from verifier.compare import (
    TOLERANCES,
    bitwise_equal,
    compare,
    compare_outputs,
    outputs_bitwise_equal,
    tolerance,
)


def test_f64_within_and_beyond_tolerance():
    expected = np.linspace(-3.0, 3.0, 101)
    close = expected * (1 + 1e-12)
    assert compare(close, expected, "f64").ok
    far = expected.copy()
    far[17] += 1e-6
    result = compare(far, expected, "f64")
    assert not result.ok
    assert result.mismatches == 1
    assert result.first_bad_index == 17
    assert result.max_abs_error == pytest.approx(1e-6, rel=1e-3)


def test_f32_tolerance_is_looser_than_f64():
    expected = np.full(8, 100.0, dtype=np.float32)
    actual = expected + np.float32(5e-3)  # rel 5e-5: inside f32 (1e-4), outside f64 (1e-9)
    assert compare(actual, expected, "f32").ok
    assert not compare(actual.astype(np.float64), expected.astype(np.float64), "f64").ok


def test_half_precision_tolerances_exist_and_are_looser():
    assert TOLERANCES["f16"][0] > TOLERANCES["f32"][0]
    assert TOLERANCES["bf16"][0] >= TOLERANCES["f16"][0]
    expected = np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16)
    actual = np.array([1.0078125, 2.0, 3.0], dtype=ml_dtypes.bfloat16)  # one bf16 ulp at 1.0
    assert compare(actual, expected, "bf16").ok
    assert not compare(np.array([1.5, 2, 3], dtype=ml_dtypes.bfloat16), expected, "bf16").ok


def test_integers_and_bools_are_exact():
    assert tolerance("i64") == (0.0, 0.0)
    a = np.array([1, 2, 3], dtype=np.int64)
    assert compare(a, a.copy(), "i64").ok
    off = compare(np.array([1, 2, 4]), a, "i64")
    assert not off.ok and off.mismatches == 1 and off.max_abs_error == 1.0
    assert not compare(np.array([True, False]), np.array([True, True]), "bool").ok


def test_nan_and_inf_positions_must_match_exactly():
    expected = np.array([1.0, np.nan, np.inf, -np.inf])
    assert compare(expected.copy(), expected, "f64").ok
    # NaN where the reference is finite: a lenient "allclose" would ignore it, we do not.
    moved = np.array([np.nan, np.nan, np.inf, -np.inf])
    result = compare(moved, expected, "f64")
    assert not result.ok and result.nonfinite_mismatches == 1
    # +inf versus -inf is a mismatch too, as is NaN versus inf.
    assert not compare(np.array([1.0, np.nan, -np.inf, -np.inf]), expected, "f64").ok
    assert not compare(np.array([1.0, np.inf, np.inf, -np.inf]), expected, "f64").ok


def test_shape_mismatch_and_missing_output_fail():
    assert not compare(np.zeros(3), np.zeros(4), "f64").ok
    results = compare_outputs({"C": np.zeros(2)}, {"C": np.zeros(2), "D": np.zeros(2)},
                              {"C": "f64", "D": "f64"})
    assert results["C"].ok and not results["D"].ok


def test_bitwise_equality_sees_signed_zero_and_dtype():
    a = np.array([0.0, 1.0])
    assert bitwise_equal(a, a.copy())
    assert not bitwise_equal(a, np.array([-0.0, 1.0]))  # equal as numbers, different bits
    assert not bitwise_equal(a, a.astype(np.float32))
    assert outputs_bitwise_equal({"C": a}, {"C": a.copy()})
    assert not outputs_bitwise_equal({"C": a}, {"D": a})


def test_unknown_dtype_is_refused():
    with pytest.raises(ValueError):
        tolerance("c64")


# ------------------------------------------------------------------------------- the scaled method


def test_scaled_allowance_is_per_element_and_reports_the_worst_element():
    from verifier.compare import FLOOR_ULPS, SAFETY, scaled_allowance

    expected = np.array([1.0, 1000.0, 5.0], dtype=np.float32)
    errors = [np.array([0.0, 1e-2, 0.0]), np.array([0.0, 1e-2, 0.0])]
    allowance = scaled_allowance("f32", expected, errors)
    u = 2.0**-24
    assert allowance[1] == pytest.approx(SAFETY * 2e-2 + FLOOR_ULPS * u * 1000, rel=1e-6)
    assert allowance[0] == pytest.approx(FLOOR_ULPS * u * 1.0, rel=1e-3)  # a few ulps, no more
    inside = expected + np.array([0, 3e-2, 0], dtype=np.float32)
    result = compare(inside, expected, "f32", allowance=allowance, magnitude=np.array([1.0, 2e5, 5.0]))
    assert result.ok and result.method == "scaled"
    assert result.worst_index == 1 and 0 < result.error_ratio <= 1
    assert result.bound_at_worst == pytest.approx(allowance[1])
    assert result.magnitude_at_worst == 2e5 and result.count_at_worst > 0
    # one ulp-scale error at element 0 is fine, a 1e-5 relative one is not (the fixed rule allows 1e-4)
    off = expected.copy()
    off[0] = np.float32(1.00001)
    bad = compare(off, expected, "f32", allowance=allowance)
    assert not bad.ok and bad.first_bad_index == 0 and bad.error_ratio > 1
    assert compare(off, expected, "f32").ok


def test_scaled_method_keeps_the_exact_nan_inf_rule():
    expected = np.array([1.0, np.nan, np.inf])
    allowance = np.array([np.inf, np.inf, np.inf])  # even an unbounded element cannot hide a NaN
    assert compare(expected.copy(), expected, "f64", allowance=allowance).ok
    result = compare(np.array([1.0, 2.0, np.inf]), expected, "f64", allowance=allowance)
    assert not result.ok and result.nonfinite_mismatches == 1


def test_compare_outputs_uses_allowances_where_given_and_fixed_elsewhere():
    actual = {"C": np.array([1.0 + 1e-6]), "D": np.array([1.0 + 1e-6])}
    expected = {"C": np.array([1.0]), "D": np.array([1.0])}
    results = compare_outputs(actual, expected, {"C": "f32", "D": "f32"}, allowances={"C": np.array([1e-7])})
    assert results["C"].method == "scaled" and not results["C"].ok
    assert results["D"].method == "fixed" and results["D"].ok
    assert compare_outputs({"I": np.array([3])}, {"I": np.array([3])}, {"I": "i64"})["I"].method == "exact"


def test_result_records_and_prints_the_bound_and_round_trips():
    from verifier.result import Outcome, VerificationResult

    comparison = compare(np.array([2.0]), np.array([2.0 + 1e-6]), "f32", allowance=np.array([1e-5]),
                         magnitude=np.array([3.0]))
    result = VerificationResult(Outcome.PASS, reference="torch", max_abs_error=1e-6, max_rel_error=5e-7,
                                tolerance="scaled", max_error_ratio=comparison.error_ratio,
                                outputs={"C": comparison.to_json()})
    again = VerificationResult.loads(result.dumps())
    assert again == result
    text = result.summary()
    assert "tolerance: scaled" in text and "worst error/bound: 0.1" in text
    assert "C: max abs" in text and "vs bound 1.000e-05" in text and "[scaled]" in text
    # a result stored before these fields existed still loads
    old = result.to_json()
    for key in ("tolerance", "max_error_ratio"):
        old.pop(key)
    assert VerificationResult.from_json(old).tolerance is None


def test_elements_the_bound_says_little_about_are_counted():
    expected = np.array([1.0, 2.0, 0.0, 4.0])
    allowance = np.array([1e-6, 5.0, 1.0, np.inf])  # element 1 and 3: allowed their own size or more
    result = compare(expected + 0.5 * np.array([0, 1, 0, 1]), expected, "f64", allowance=allowance)
    assert result.ok and result.loose_elements == 2
    assert compare(expected, expected, "f64", allowance=np.full(4, 1e-9)).loose_elements == 0


def test_an_exact_boolean_program_evaluates_no_error_bound():
    """Bool and integer outputs are compared exactly: the f64 bound arrays are never made (issue 45)."""
    from leir.interpreter import run
    from leir.program import load_program
    from verifier.error_bound import program_bound
    from verifier.inputs import make_inputs
    from verifier.verify import bounded_compare

    program = load_program("input A: f32[64, 64]\noutput C: bool[64, 64]\n---\n"
                           "B^{64}_{tx=0}L^{64}_{a=0}[C^{bool,g}_{tx,a}=if_then_else(exp(A^{f32,g}_{tx,a})>1,1,0);];\n")
    arrays = make_inputs(program, seed=0)
    outputs = run(program, arrays)
    evaluated = []

    def bound(p, a):
        evaluated.append(p)
        return program_bound(p, a).outputs

    notes: list[str] = []
    (result,) = bounded_compare(program, program, outputs, outputs, arrays, notes=notes, bound=bound).values()
    assert result.ok and result.method == "exact" and result.size == 64 * 64
    assert evaluated == [] and notes == []
    flipped = {"C": ~outputs["C"]}
    (wrong,) = bounded_compare(program, program, flipped, outputs, arrays, bound=bound).values()
    assert not wrong.ok and wrong.mismatches == 64 * 64 and evaluated == []
