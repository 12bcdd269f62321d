"""The error bound holds: a float evaluation of a program never lands further from the exact value than it.

The float evaluation is the LEIR interpreter in the program's own dtypes, one iteration at a time in
program order (``vectorise=False``: the language's literal semantics, the order the kernel runs in); the
exact value is the bound's own float64 evaluation. Each program exercises one rule of
``verifier.error_bound`` (sums, products, division, exp/log/sqrt/erf, max, conditions, recurrences, cast
reads, accumulation after a write, nested blocks, a running product that underflows).
"""

from __future__ import annotations

import numpy as np
import pytest

from leir.interpreter import InterpreterError, run
from leir.program import load_program
from verifier.error_bound import UNIT_ROUNDOFF, program_bound
from verifier.inputs import make_inputs

PROGRAMS = {
    "sum": """input A: f32[3, 4096]
output C: f32[3]
---
B^{3}_{tx=0}L^{4096}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a}*1000;];
""",
    "positive sum of squares": """input A: f32[2, 8192]
output C: f32[2]
---
B^{2}_{tx=0}L^{8192}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+(A^{f32,g}_{tx,a}+3)*(A^{f32,g}_{tx,a}+3);];
""",
    "cumsum": """input A: f32[2, 2048]
output C: f32[2, 2048]
---
B^{2}_{tx=0}L^{2048}_{a=0}[C^{f32,g}_{tx,a}=if_then_else(a-1<0,0,C^{f32,g}_{tx,a-1})+A^{f32,g}_{tx,a}*100;];
""",
    "softmax": """input A: f32[2, 1024]
output C: f32[2, 1024]
---
B^{2}_{tx=0}L^{1024}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a}*4);];
B^{2}_{tx=0}L^{1024}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}*4-D^{f32,g}_{tx});];
B^{2}_{tx=0}L^{1024}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}*4-D^{f32,g}_{tx})/E^{f32,g}_{tx};];
""",
    "rms norm": """input A: f32[4, 256]
output C: f32[4, 256]
---
B^{4}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx}=D^{f32,g}_{tx}+A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a};];
B^{4}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}/sqrt(D^{f32,g}_{tx}/256+0.00001);];
""",
    "log, erf and a condition": """input A: f32[512]
output C: f32[512]
---
B^{512}_{tx=0}[C^{f32,g}_{tx}=if_then_else(A^{f32,g}_{tx}>0,log(A^{f32,g}_{tx}*A^{f32,g}_{tx}+0.1),erf(A^{f32,g}_{tx}*2)-0.3);];
""",
    "linear with bias (accumulate after write)": """input A: f32[4, 512]
input W: f32[512, 8]
input Bi: f32[8]
output C: f32[4, 8]
---
B^{4}_{tx=0}L^{8}_{a=0}L^{512}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*W^{f32,g}_{c,a};];
B^{4}_{tx=0}L^{8}_{a=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+Bi^{f32,g}_{a};];
""",
    "split reduction in a nested block": """input A: f32[2, 1024]
output C: f32[2]
---
B^{2}_{tx=0}L^{32}_{a=0}[D^{f32,g}_{tx,a}=0;L^{32}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+A^{f32,g}_{tx,a*32+c};];];
B^{2}_{tx=0}L^{32}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+D^{f32,g}_{tx,a};];
""",
    "f64 sum read back as f32": """input A: f64[2, 4096]
output C: f32[2]
---
B^{2}_{tx=0}L^{4096}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};];
B^{2}_{tx=0}[C^{f32,g}_{tx}=D^{f32,g}_{tx}*0.1;];
""",
    "running product into subnormals": """input A: f32[4, 1024]
output C: f32[4, 1024]
---
B^{4}_{tx=0}L^{1024}_{a=0}[C^{f32,g}_{tx,a}=if_then_else(a-1<0,1,C^{f32,g}_{tx,a-1})*(A^{f32,g}_{tx,a}*0.75);];
""",
    "half precision": """input A: f16[2, 256]
output C: f16[2]
---
B^{2}_{tx=0}L^{256}_{a=0}[C^{f16,g}_{tx}=C^{f16,g}_{tx}+A^{f16,g}_{tx,a}*A^{f16,g}_{tx,a};];
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("seed", [0, 1])
def test_float_evaluation_stays_inside_the_bound(name: str, seed: int):
    program = load_program(PROGRAMS[name])
    arrays = make_inputs(program, seed=seed)
    if "log" in name:
        arrays["A"] = arrays["A"] * 3
    bound = program_bound(program, arrays)
    actual = run(program, arrays, vectorise=False)
    for output, data in bound.outputs.items():
        got = np.asarray(actual[output], dtype=np.float64)
        error = np.abs(got - data.value)
        assert np.isfinite(data.error).all() and (data.error >= 0).all()
        assert (error <= data.error).all(), (name, float((error / np.maximum(data.error, 1e-300)).max()))
        # and the bound is a bound, not a wall: within a few hundred times the error actually made
        # wherever the program makes one worth measuring (in the normal range: below it the bound is the
        # absolute underflow term, however far below the value has shrunk)
        dtype = program.signature.get(output).dtype
        normal = np.abs(data.value) >= np.finfo(np.float16 if dtype == "f16" else np.float32).tiny
        made = normal & (error > 100 * UNIT_ROUNDOFF[dtype] * np.abs(data.value))
        if made.any():
            assert np.median(data.error[made] / error[made]) < 1e4


def test_a_running_product_into_subnormals_needs_the_underflow_term(monkeypatch):
    """Without ``η`` the bound of a product that shrinks below f32's normal range is broken (issue 45)."""
    import verifier.error_bound as error_bound

    program = load_program(PROGRAMS["running product into subnormals"])
    arrays = make_inputs(program, seed=0)
    actual = np.asarray(run(program, arrays, vectorise=False)["C"], dtype=np.float64)
    (data,) = program_bound(program, arrays).outputs.values()
    subnormal = (np.abs(data.value) < np.finfo(np.float32).tiny) & (actual != 0)
    assert subnormal.sum() > 20 and (np.abs(actual - data.value) <= data.error).all()
    monkeypatch.setattr(error_bound, "_UNDERFLOW_BY_UNIT", {})
    (without,) = program_bound(program, arrays).outputs.values()
    assert (np.abs(actual - without.value) > without.error).any()


def test_value_and_magnitude_are_the_float64_sum_and_the_sum_of_absolute_terms():
    program = load_program(PROGRAMS["sum"])
    arrays = make_inputs(program, seed=3)
    (data,) = program_bound(program, arrays).outputs.values()
    terms = arrays["A"].astype(np.float64) * 1000
    assert np.allclose(data.value, terms.sum(axis=1), rtol=1e-12)
    assert np.allclose(data.magnitude, np.abs(terms).sum(axis=1), rtol=1e-12)
    # mixed signs: the running bound is far below the worst-case n·u·Σ|terms|
    worst_case = 4096 * UNIT_ROUNDOFF["f32"] * data.magnitude
    assert (data.error < worst_case / 4).all()


def test_bound_grows_with_the_length_of_a_reduction():
    errors = []
    for n in (64, 1024, 16384):
        program = load_program(f"input A: f32[{n}]\noutput C: f32[]\n---\n"
                               f"L^{{{n}}}_{{a=0}}[C^{{f32,g}}=C^{{f32,g}}+(A^{{f32,g}}_{{a}}+2);];\n")
        (data,) = program_bound(program, make_inputs(program, seed=0)).outputs.values()
        errors.append(float(data.error) / float(data.magnitude))
    assert errors[0] < errors[1] < errors[2]
    assert errors[2] < 16384 * UNIT_ROUNDOFF["f32"] * 1.01  # never above the classic γ_n


def test_exact_operations_have_no_error_and_non_finite_values_are_left_to_the_pattern_rule():
    program = load_program("input A: f32[4]\noutput C: f32[4]\n---\n"
                           "B^{4}_{tx=0}[C^{f32,g}_{tx}=max(-A^{f32,g}_{tx},abs(A^{f32,g}_{tx}));];\n")
    arrays = {"A": np.array([1.5, -2.0, np.nan, np.inf], dtype=np.float32)}
    (data,) = program_bound(program, arrays).outputs.values()
    assert list(data.error) == [0.0, 0.0, 0.0, 0.0]  # negation, abs and max do not round
    assert np.isnan(data.value[2]) and np.isposinf(data.value[3])
    scaled = load_program("input A: f32[4]\noutput C: f32[4]\n---\nB^{4}_{tx=0}[C^{f32,g}_{tx}=A^{f32,g}_{tx}*3;];\n")
    (data,) = program_bound(scaled, arrays).outputs.values()
    assert data.error[1] == pytest.approx(UNIT_ROUNDOFF["f32"] * 6.0)  # one rounding of |r| = 6
    assert data.error[2] == 0.0 and data.error[3] == 0.0


def test_a_program_too_large_to_evaluate_is_refused_clearly():
    program = load_program("input A: f32[2]\noutput C: f32[2]\n---\n"
                           "B^{2}_{tx=0}L^{20000}_{a=0}L^{20000}_{c=0}[E^{f32,g}_{a,c}=A^{f32,g}_{tx};];"
                           "B^{2}_{tx=0}[C^{f32,g}_{tx}=E^{f32,g}_{tx,tx};];\n")
    with pytest.raises(InterpreterError, match="elements"):
        program_bound(program, {"A": np.ones(2, np.float32)})
