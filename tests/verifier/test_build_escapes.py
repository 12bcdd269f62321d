"""Programs the checker accepts that TVM used to refuse, or build in exponential time (issue 7 escapes).

Each class is checked against its rule, not an example: the program builds, the kernel computes the
same bits as the interpreter (both plans) on edge values, and — for the nested classes — the work TVM
does grows linearly with the depth (``tvm_adapter.peak_ir_size``, the largest module between build
passes: a duplicating lowering shows as 2^depth there; ``bench/build_depth.py`` reports the times).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from leir.checker import check
from leir.interpreter import run as interpret
from leir.program import load_program
from verifier import tvm_adapter
from verifier.build import build
from verifier.lowering import lower, to_tvmscript

NAN, INF = math.nan, math.inf
N = 16
EDGE_F = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.1, 2.5, -7.5, 3e4, -300.5, 1e-3, 255.9, 6.0, -2.0])
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": np.float32,
      "i32": np.int32, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "i64": np.int64}


def _edge_ints(dtype: str) -> np.ndarray:
    info = np.iinfo(NP[dtype])
    values = [0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1, 5, 0, 100, 255, 4, 9, 6]
    return np.array([max(info.min, min(info.max, v)) for v in values], NP[dtype])


def _inputs(dtype: str) -> dict[str, np.ndarray]:
    return {"A": _edge_ints(dtype) if dtype[0] in "iu" else EDGE_F.astype(NP[dtype])}


def _agree(text: str, inputs: dict[str, np.ndarray]) -> None:
    """Kernel (twice) and interpreter (vectorised and sequential) give the same bits."""
    program = load_program(text)
    info = check(program)
    assert info.ok, [str(d) for d in info.errors]
    kernel = build(program, info=info, cache=False)
    got, again = kernel.run(inputs), kernel.run(inputs)
    for plan in (True, False):
        want = interpret(program, inputs, info=info, vectorise=plan)
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], np.asarray(value), err_msg=f"{name} (vectorise={plan}): {text}")
            np.testing.assert_array_equal(again[name], got[name], err_msg=f"{name}: not repeatable")


def _program(dtype: str, body: str, kind: str = "L") -> str:
    return f"input A: {dtype}[{N}]\noutput C: {dtype}[{N}]\n---\n{kind}^{{{N}}}_{{i=0}}[C^{{{dtype},g}}_{{i}}={body};];"


def _nested(func: str, depth: int, dtype: str) -> str:
    """``func(A*0.5, func(A+1, …))``: each level mentions the one below twice in the NaN-propagating select."""
    a = f"A^{{{dtype},g}}_{{i}}"
    text = f"{a}+1"
    for k in range(depth):
        text = f"{func}({a}*0.5,{text})" if k % 2 else f"{func}({text},{a}-2)"
    return text


# ---------------------------------------------------------------------------------- nested bindings


@pytest.mark.parametrize("kind", ["L", "V", "P"])
@pytest.mark.parametrize("dtype,func", [("f32", "max"), ("f16", "min"), ("bf16", "max"), ("f64", "min")])
def test_nested_nan_max_min_agree_at_depth(dtype, func, kind):
    _agree(_program(dtype, _nested(func, 16, dtype), kind), _inputs(dtype))


@pytest.mark.parametrize("kind", ["L", "V"])
@pytest.mark.parametrize("dtype", ["i32", "u8", "i64"])
def test_integer_exp_chains_saturate_at_every_level(dtype, kind):
    chain = "exp(" * 8 + f"A^{{{dtype},g}}_{{i}}//100" + ")" * 8
    _agree(_program(dtype, f"{chain}-exp(log(A^{{{dtype},g}}_{{i}}))", kind), _inputs(dtype))


def _peak(text: str) -> int:
    program = load_program(text)
    return tvm_adapter.peak_ir_size(lower(program, info=check(program)).mod, {"kind": "llvm"})


@pytest.mark.parametrize("make", [
    lambda n: _program("f32", _nested("max", n, "f32")),
    lambda n: _program("i32", "exp(" * n + "A^{i32,g}_{i}" + ")" * n),
    lambda n: _program("f32", _nested("min", n, "f32"), "V"),
], ids=["nan-max", "int-exp", "vector-min"])
def test_tvm_work_grows_linearly_with_the_nesting_depth(make):
    """The IR TVM handles grows by a constant per level: levels 12→24 add no more per level than 6→12."""
    s6, s12, s24 = (_peak(make(n)) for n in (6, 12, 24))
    per_level_low, per_level_high = (s12 - s6) / 6, (s24 - s12) / 12
    assert per_level_high <= 1.5 * per_level_low + 50, (s6, s12, s24)


def test_no_tvm_binding_mentions_another():
    """The rule that keeps it linear: a ``T.bind`` value never names another ``T.bind`` variable (TVM's
    simplifier would substitute it); chained values go through buffers."""
    for text in (_program("f32", _nested("max", 8, "f32")), _program("i32", "exp(exp(exp(A^{i32,g}_{i})))"),
                 _program("f32", "(i+A^{f32,g}_{i})//(A^{f32,g}_{i}-i)")):
        script = to_tvmscript(load_program(text))
        bound = re.findall(r"(_e\d+) = T\.bind\((.*)\)$", script, flags=re.MULTILINE)
        names = {name for name, _ in bound}
        for name, value in bound:
            assert not names & set(re.findall(r"\b_e\d+\b(?!\[)", value)), (name, value)


def test_a_value_used_twice_is_bound_once_and_the_tir_is_deterministic():
    text = _program("f32", "max(A^{f32,g}_{i}+1,2)+max(A^{f32,g}_{i}+1,2)")
    script = to_tvmscript(load_program(text))
    assert script.count("A[v_i] + T.float32(1.0)") == 1
    assert to_tvmscript(load_program(text)) == script


# ------------------------------------------------------------------------- folded integer arithmetic


UNSIGNED_FORMS = ["i-3", "(i-3)//2", "(i-3)%5", "A^{D,g}_{i}//(i-3)", "-i", "-A^{D,g}_{i}",
                  "A^{D,g}_{i}-A^{D,g}_{i}-1", "(A^{D,g}_{i}-A^{D,g}_{i}-1)//2", "0-1", "j-1", "(j-2)*(i-1)",
                  "max(i-3,A^{D,g}_{i})", "A^{D,g}_{i}-(i+1)*3"]


#: Every unsigned dtype with every form — except u64 with `*`, whose overflow the kernel leaves undefined
#: (docs/leir.md §6: LLVM ``nuw``), so the two sides are not meant to agree there.
UNSIGNED_CASES = [(dtype, form) for dtype in ("u8", "u16", "u32", "u64") for form in UNSIGNED_FORMS
                  if not (dtype == "u64" and "*" in form)]
#: The u64 forms the checker refuses (``u64-divisor``): TVM's 64-bit unsigned division of a divisor that
#: subtracts with a loop variable gives wrong quotients, so the program never reaches the kernel.
U64_REFUSED = {"A^{D,g}_{i}//(i-3)"}


@pytest.mark.parametrize(("dtype", "form"), UNSIGNED_CASES)
def test_unsigned_subtraction_wraps_with_loop_variables_tensors_and_known_values(dtype, form):
    body = form.replace("{D,", "{" + dtype + ",")
    text = (f"input A: {dtype}[{N}]\noutput C: {dtype}[{N}]\n---\n"
            f"L^{{{N}}}_{{i=0}}[L^{{1}}_{{j=0}}[C^{{{dtype},g}}_{{i}}={body};];];")
    refused = [d.code for d in check(load_program(text)).errors]
    if dtype == "u64" and form in U64_REFUSED:
        assert refused == ["u64-divisor"]
        return
    assert refused == []
    _agree(text, _inputs(dtype))


@pytest.mark.parametrize("form", ["A^{i32,g}_{i}*0+2147483647+1", "abs(A^{i32,g}_{i}*0-2147483647-1)",
                                  "-(A^{i32,g}_{i}*0-2147483647-1)", "(A^{i32,g}_{i}*0+65536)*65536",
                                  "abs(A^{i32,g}_{i})", "-A^{i32,g}_{i}*3"])
@pytest.mark.parametrize("kind", ["L", "V"])
def test_i32_wraps_when_the_result_is_a_known_constant(form, kind):
    _agree(_program("i32", form, kind), _inputs("i32"))


@pytest.mark.parametrize("form", ["i//(A^{D,g}_{i}+A^{D,g}_{i})", "A^{D,g}_{i}//i", "(i+0.5)//A^{D,g}_{i}",
                                  "max(i//A^{D,g}_{i},A^{D,g}_{i})", "(i-7)//(i-7)"])
@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
def test_float_floordiv_of_loop_variables_follows_numpy(dtype, form):
    _agree(_program(dtype, form.replace("{D,", "{" + dtype + ",")), _inputs(dtype))


# ------------------------------------------------------------------- bindings inside taken branches


def test_a_gather_bound_inside_an_untaken_branch_never_reads_outside_its_tensor():
    """A binding runs whether or not its branch is taken, so its gather index is clamped: the kernel
    neither reads garbage nor crashes where the guard says the index is out of range."""
    text = ("input A: f32[16]\ninput B: i32[16]\noutput C: f32[16]\n---\n"
            "V^{16}_{i=0}[C^{f32,g}_{i}=if_then_else(B^{i32,g}_{i}>=0&B^{i32,g}_{i}<16,"
            "max(A^{f32,g}_{B^{i32,g}_{i}}+1,max(A^{f32,g}_{B^{i32,g}_{i}}*2,1)),-1);];")
    b = np.array([0, 15, -(2**31), 2**31 - 1, 3, -1, 16, 1 << 20, 7, 8, -5, 2, 9, 10, 11, 12], np.int32)
    _agree(text, {"A": EDGE_F.astype(np.float32), "B": b})


def test_a_product_index_inside_a_guard_is_clamped_where_the_guard_fails():
    text = ("input A: f32[16]\noutput C: f32[16]\n---\n"
            "L^{16}_{i=0}[C^{f32,g}_{i}=if_then_else(i*i<16,max(A^{f32,g}_{i*i}+1,A^{f32,g}_{i*i}*3),0);];")
    assert "T.min(" in to_tvmscript(load_program(text))
    _agree(text, _inputs("f32"))
