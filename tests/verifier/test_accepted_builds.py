"""Every program the checker accepts lowers and builds with TVM (llvm), or the checker refuses it (issue 7).

Programs are generated systematically, by class and swept over sizes across each limit of
docs/leir.md §7: long sums, bracket nesting (right-nested sums, nested calls, nested if_then_else),
loop nesting, literals at every integer dtype's edges, float literals near the largest finite value,
``%`` and ``**`` in every kind of dtype, min/max reductions over every dtype, nested NaN-propagating
max/min (24 levels) and integer exp chains (12 levels), also vectorised, unsigned and i32 arithmetic that
TVM constant-folds, float ``//`` of loop variables. For each: accepted ⇒ ``build`` succeeds; refused ⇒ a
diagnostic with a position, never an exception.
"""

from __future__ import annotations

import numpy as np
import pytest

from leir.ast import DTYPES
from leir.checker import check
from leir.errors import LeirSyntaxError
from leir.limits import MAX_LOOPS, MAX_NESTING, MAX_TERMS
from leir.program import load_program
from verifier.build import build

INT_EDGES = {
    "i8": (-(2**7), 2**7 - 1), "i16": (-(2**15), 2**15 - 1), "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
}
A = "A^{f32,g}_{i}"


def _unary(dt: str, body: str, out_shape: str = "[4]") -> str:
    return f"input A: {dt}[4]\noutput C: {dt}{out_shape}\n---\n{body}"


def _lit(value: int) -> str:
    return str(value) if value >= 0 else f"-{-value}"


def _cases():
    f32 = "input A: f32[4]\noutput C: f32[4]\n---\n"
    for n in (1, 2, 50, 199, 201, 400, 900, MAX_TERMS - 2, MAX_TERMS + 1):
        yield f"sum{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={'+'.join([A] * n)};];"
    for n in (MAX_NESTING - 2, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 120):
        right = A
        for _ in range(n):
            right = f"{A}-({right})"
        yield f"right{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={right};];"
        yield f"exp{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={'exp(' * n}{A}{')' * n};];"
        ite = A
        for k in range(n):
            ite = f"if_then_else(i<{k % 4},{ite},{A})"
        yield f"ite{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={ite};];"
        yield f"and{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}=if_then_else({'&'.join(['i<3'] * n)},1,{A});];"
        yield f"chain{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}=if_then_else({'<'.join(['i'] * n)},1,{A});];"
        yield f"bfpow{n}", "input A: bf16[4]\noutput C: bf16[4]\n---\n" + \
            f"L^{{4}}_{{i=0}}[C^{{bf16,g}}_{{i}}={'**'.join(['A^{bf16,g}_{i}'] * n)};];"
        yield f"neg{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={'-(' * n}{A}+1{')' * n};];"
    # nested NaN-propagating max/min and integer exp chains (each level a saturating conversion): every
    # level binds its operands once, so TVM's build time grows linearly (bench/build_depth.py); before,
    # it doubled (max) or grew ~15x (exp) per level, and the sweep stopped at 6 and 3 levels
    for n in (6, 24, MAX_NESTING + 1, 120):
        yield f"max{n}", f32 + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={'max(1,' * n}{A}{')' * n};];"
    for n in (3, 12, MAX_NESTING + 1):
        yield f"intexp{n}", "input A: i32[4]\noutput C: i32[4]\n---\n" + \
            f"L^{{4}}_{{i=0}}[C^{{i32,g}}_{{i}}={'exp(' * n}A^{{i32,g}}_{{i}}{')' * n};];"
    for n in (1, 12):  # the same under a vectorised loop (bindings there are per-lane buffers)
        yield f"vmin{n}", f32 + f"V^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={'min(A^{f32,g}_{i}*2,' * n}{A}+1{')' * n};];"
    for n in (10, MAX_LOOPS - 1, MAX_LOOPS, MAX_LOOPS + 1, 120):
        inner = "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];"
        yield f"loops{n}", f32 + "".join(f"L^{{1}}_{{j{k}=0}}[" for k in range(n - 1)) + inner + "];" * (n - 1)
        kinds = "LPVU"
        yield f"kinds{n}", f32 + "".join(f"{kinds[k % 4]}^{{1}}_{{j{k}=0}}[" for k in range(n - 1)) + inner + \
            "];" * (n - 1)
    for dt, (lo, hi) in INT_EDGES.items():
        for value in (lo - 1, lo, hi, hi + 1):
            yield f"lit_{dt}_{value}", _unary(dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}=A^{{{dt},g}}_{{i}}+{_lit(value)};];")
            yield f"cmp_{dt}_{value}", _unary(
                dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}=if_then_else(A^{{{dt},g}}_{{i}}<{_lit(value)},1,0);];")
    for dt in ("f16", "f32", "f64", "bf16"):
        for text in ("65504", "65520", "3.4e38", "3.5e38", "1.7e308", "1e309"):
            yield f"flit_{dt}_{text}", _unary(dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}=A^{{{dt},g}}_{{i}}*{text};];")
    for dt in DTYPES:
        if dt == "bool":
            continue
        yield f"mod_{dt}", _unary(dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}=A^{{{dt},g}}_{{i}}%3;];")
        for e in ("0", "2", "5", "8", "9", "i"):
            yield f"pow_{dt}_{e}", _unary(dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}=A^{{{dt},g}}_{{i}}**{e};];")
        for comb in ("max", "min"):
            yield f"{comb}_{dt}", _unary(
                dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}={comb}(C^{{{dt},g}},A^{{{dt},g}}_{{i}});];", "[]")
    for dt in DTYPES:
        for func in ("exp", "log", "sqrt", "abs", "erf"):
            yield f"call_{func}_{dt}", _unary(dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}={func}(A^{{{dt},g}}_{{i}});];")
    # arithmetic TVM's constant folding refused: unsigned results below zero, i32/u32 results out of
    # range, float // of a loop variable — with loop variables, tensors, and extent-1 loops (a known value)
    for dt in ("u8", "u16", "u32", "u64", "i32"):
        r = f"A^{{{dt},g}}_{{i}}"
        for k, expr in enumerate(("i-3", "(i-3)//2", f"{r}//(i-3)", "-i", f"{r}-{r}-1", f"({r}-{r}-1)%3",
                                  f"{r}*0+2147483647+1", f"abs({r}*0-2147483647-1)", "j-1")):
            yield f"fold_{dt}_{k}", _unary(dt, f"L^{{4}}_{{i=0}}[L^{{1}}_{{j=0}}[C^{{{dt},g}}_{{i}}={expr};];];")
    for dt in ("f16", "f32", "f64", "bf16"):
        r = f"A^{{{dt},g}}_{{i}}"
        for k, expr in enumerate((f"i//({r}+{r})", f"{r}//i", f"(i+0.5)//{r}", f"max(i//{r},{r})")):
            yield f"fdiv_{dt}_{k}", _unary(dt, f"L^{{4}}_{{i=0}}[C^{{{dt},g}}_{{i}}={expr};];")
    yield "pow2i", "output C: i32[4]\n---\nL^{4}_{i=0}[C^{i32,g}_{i}=2**i;];"
    yield "divzero", f32 + "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i//0+4};];"


CASES = dict(_cases())


@pytest.mark.parametrize("name", sorted(CASES))
def test_accepted_programs_build_and_refused_ones_say_where(name):
    try:
        program = load_program(CASES[name])
    except LeirSyntaxError as exc:  # the parser's limit: refused with a code and a position
        assert exc.code == "too-deep" and exc.line >= 4, name
        return
    info = check(program)
    if not info.ok:
        assert all(d.line is not None for d in info.errors), [str(d) for d in info.errors]
        return
    kernel = build(program, target="llvm", info=info, cache=False)
    rng = np.random.default_rng(0)
    inputs = {d.name: (rng.integers(0, 3, size=d.shape) if d.dtype[0] in "iu" else rng.random(d.shape))
              for d in program.signature.by_role("input")}
    outputs = kernel.run(inputs)  # it runs; what it computes at the edges is the semantics' business
    assert set(outputs) == {d.name for d in program.signature.by_role("output")}


def test_the_sweep_crosses_every_limit():
    """Both sides of each limit are in the sweep: some accepted, some refused, in each class."""
    outcome = {}
    for name, text in CASES.items():
        try:
            outcome[name] = check(load_program(text)).ok
        except LeirSyntaxError:
            outcome[name] = False
    for prefix in ("sum", "right", "exp", "max", "ite", "neg", "and", "chain", "intexp", "bfpow", "loops", "kinds", "lit_", "cmp_", "flit_",
                   "mod_", "pow_"):
        seen = {ok for name, ok in outcome.items() if name.startswith(prefix)}
        assert seen == {True, False}, prefix
