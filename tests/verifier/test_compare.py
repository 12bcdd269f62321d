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
