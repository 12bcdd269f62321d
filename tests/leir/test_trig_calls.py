"""``sin``/``cos``: the documented superset of the public call set (docs/leir.md §6).

Both parsers accept them, the printer gives the text back byte for byte, the checker knows their arity,
and the interpreter and the TVM lowering agree with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

from leir.ast import UNARY_CALLS
from leir.checker import check
from leir.interpreter import run
from leir.parser import parse_body
from leir.printer import canonical
from leir.program import dump_program, load_program

TEXT = ("input A: f64[6]\ninput I: i64[6]\noutput C: f64[6]\noutput D: i64[6]\n---\n"
        "B^{6}_{tx=0}[C^{f64,g}_{tx}=sin(A^{f64,g}_{tx})*2+cos(A^{f64,g}_{tx}*0.5);];"
        "B^{6}_{tx=0}[D^{i64,g}_{tx}=cos(I^{i64,g}_{tx})*10;];\n")


def _inputs():
    return {"A": np.linspace(-4.0, 4.0, 6), "I": np.arange(-2, 4, dtype=np.int64)}


def test_sin_cos_are_unary_calls_and_round_trip():
    assert {"sin", "cos"} <= UNARY_CALLS
    program = load_program(TEXT)
    assert load_program(dump_program(program)) == program
    body = "B^{6}_{tx=0}[C^{f64,g}_{tx}=sin(A^{f64,g}_{tx})+cos(A^{f64,g}_{tx});];"
    assert canonical(parse_body(body)) == body


def test_checker_counts_their_arguments():
    bad = load_program("input A: f64[2]\noutput C: f64[2]\n---\n"
                       "B^{2}_{tx=0}[C^{f64,g}_{tx}=sin(A^{f64,g}_{tx})+A^{f64,g}_{tx};];\n")
    assert check(bad).ok
    with pytest.raises(Exception, match="expected|Unexpected|sin"):
        load_program("input A: f64[2]\noutput C: f64[2]\n---\n"
                     "B^{2}_{tx=0}[C^{f64,g}_{tx}=sin(A^{f64,g}_{tx},A^{f64,g}_{tx});];\n")


def test_interpreter_matches_numpy_and_an_integer_statement_converts_the_call():
    """In an i64 statement the call runs in f64 and its result is truncated before the product."""
    got = run(load_program(TEXT), _inputs())
    a, i = _inputs()["A"], _inputs()["I"]
    np.testing.assert_allclose(got["C"], np.sin(a) * 2 + np.cos(a * 0.5), rtol=1e-14)
    np.testing.assert_array_equal(got["D"], np.trunc(np.cos(i.astype(np.float64))).astype(np.int64) * 10)


def test_llvm_lowering_matches_the_interpreter():
    from verifier.build import build
    from verifier.lowering import to_tvmscript

    program = load_program(TEXT)
    text = to_tvmscript(program)
    assert "T.sin(" in text and "T.cos(" in text
    got = build(program, "llvm").run(_inputs())
    want = run(program, _inputs())
    np.testing.assert_allclose(got["C"], want["C"], rtol=1e-12)
    np.testing.assert_array_equal(got["D"], want["D"])
