"""Differential testing: TVM (llvm) against the LEIR interpreter on random valid programs.

The generator (``programs.py``) covers every construct — all loop kinds, the four reductions, accumulate
after write, guarded recurrences, gathers, nested blocks, multi-statement blocks, integer ``/ // %``, bool
masks and outputs, ``**``, ``erf``, ``inf`` — in f32/f64 with i32/i64/bool inputs. Failures it found are
pinned as explicit regression tests in ``test_lowering.py``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from leir.checker import check
from leir.interpreter import run as interpret
from verifier.build import BuildError, build
from verifier.inputs import make_inputs
from verifier.lowering import LoweringError, lower, to_tvmscript

from .programs import Generated, leir_programs

TOLERANCE = {"f32": 2e-5, "f64": 1e-10}


def _assert_close(got: np.ndarray, expected: np.ndarray, dtype: str, where: str) -> None:
    assert got.shape == expected.shape, where
    if dtype in TOLERANCE:
        tol = TOLERANCE[dtype]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol,
                                   equal_nan=True, err_msg=where)
    else:  # integers and bools are exact
        np.testing.assert_array_equal(got, expected, err_msg=where)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(leir_programs())
def test_tvm_llvm_agrees_with_the_interpreter(gen: Generated):
    info = check(gen.program)
    assert info.ok, gen.text
    inputs = gen.inputs(seed=0)
    expected = interpret(gen.program, inputs, info=info)
    got = build(gen.program, info=info).run(inputs)
    for decl in gen.program.signature.by_role("output"):
        _assert_close(got[decl.name], expected[decl.name], decl.dtype, f"{decl.name} of {gen.text}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(leir_programs())
def test_cuda_either_builds_or_refuses_with_a_lowering_error(gen: Generated):
    """Races and unsupported GPU patterns are caught by the lowering, never by a failed TVM build."""
    try:
        build(gen.program, "cuda")
    except BuildError as exc:  # pragma: no cover - the assertion message is the point
        raise AssertionError(f"TVM failed to build {gen.text}: {exc}") from exc
    except LoweringError as exc:
        assert any(w in str(exc) for w in ("race", "cross-thread", "copy per")), str(exc)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(leir_programs())
def test_printed_tir_is_a_function_of_the_program(gen: Generated):
    first = lower(gen.program)
    assert lower(gen.program).script == first.script
    assert first.source == to_tvmscript(gen.program)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(leir_programs())
def test_tvm_llvm_agrees_with_the_interpreter_on_special_values(gen: Generated):
    """The same random programs on ``--special-values`` inputs: NaN, ±inf, zeros, large magnitudes.

    docs/leir.md §6 gives every operation one result at those values, so both semantics must put NaN and
    infinities in the same places (``assert_allclose`` with ``equal_nan``) and agree on the rest.
    """
    info = check(gen.program)
    assert info.ok, gen.text
    inputs = make_inputs(gen.program, seed=0, special_values=True,
                         shapes={name: t.shape for name, t in info.tensors.items()})
    expected = interpret(gen.program, inputs, info=info)
    got = build(gen.program, info=info).run(inputs)
    for decl in gen.program.signature.by_role("output"):
        want = expected[decl.name]
        if decl.dtype in TOLERANCE:  # same non-finite pattern exactly, then the tolerance on the rest
            np.testing.assert_array_equal(np.isfinite(got[decl.name]), np.isfinite(want), err_msg=gen.text)
        _assert_close(got[decl.name], want, decl.dtype, f"{decl.name} of {gen.text}")
