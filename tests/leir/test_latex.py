"""LEIR → LaTeX: the typeset form says what the text says, and KaTeX itself accepts every program.

KaTeX (the npm package the pages load, run under Node with ``throwOnError``) parses the LaTeX of every
corpus entry and of every built-in workload's source program, so a construct the printer gets wrong
fails here rather than as a red error box in a reviewer's browser.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from leir.corpus import load_corpus
from leir.latex import program_latex, to_latex
from leir.parser import parse_expr
from leir.program import load_program

REPO = Path(__file__).resolve().parents[2]
KATEX = REPO / "node_modules" / "katex"


def expr(text: str) -> str:
    return to_latex(parse_expr(text))


def test_division_is_a_fraction_and_floor_division_a_floor():
    assert expr("a/(b+1)") == r"\frac{a}{b + 1}"
    assert expr("i//4") == r"\left\lfloor \frac{i}{4} \right\rfloor"


def test_parentheses_only_where_the_grouping_needs_them():
    assert expr("(a+b)*c") == r"\left(a + b\right) \cdot c"
    assert expr("a-(b-c)") == r"a - \left(b - c\right)"
    assert expr("a*b+c") == r"a \cdot b + c"
    assert expr("(a+b)**2") == r"{\left(a + b\right)}^{2}"


def test_tensor_keeps_dtype_scope_and_indices():
    assert expr("A^{f32,g}_{i,k*2}") == r"A^{\scriptscriptstyle f32,g}_{i,k \cdot 2}"
    assert expr("Xb^{f16,s}") == r"\mathit{Xb}^{\scriptscriptstyle f16,s}"


def test_calls_and_if_then_else():
    assert expr("sqrt(x)+exp(-y)") == r"\sqrt{x} + \exp\left(-y\right)"
    assert expr("erf(x)") == r"\operatorname{erf}\left(x\right)"
    assert expr("max(x,0)") == r"\max\left(x, 0\right)"
    assert expr("if_then_else(i<=3&j!=0,x,0)") == (
        r"\begin{cases} x & \text{if } i \le 3 \land j \ne 0 \\ 0 & \text{otherwise} \end{cases}")


def test_one_formula_per_top_level_block_with_loops_as_operators():
    program = load_program("input A: f32[4]\noutput S: f32[1]\n---\n"
                           "L^{4}_{row_i=0}[S^{f32,g}=S^{f32,g}+A^{f32,g}_{row_i};];")
    (block,) = program_latex(program)
    assert block.startswith(r"\mathrm{L}^{4}_{\mathit{row\_i}=0}\left[\begin{array}{l} ")
    assert r"S^{\scriptscriptstyle f32,g} = S^{\scriptscriptstyle f32,g} + A^{\scriptscriptstyle f32,g}_{\mathit{row\_i}}" in block


def _katex_errors(formulas: list[str]) -> list[str]:
    script = (
        "const katex = require(process.argv[1]);"
        "const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const errors = [];"
        "for (const s of items) { try { katex.renderToString(s, {throwOnError: true, displayMode: true}); }"
        " catch (e) { errors.push(e.message + ' IN ' + s.slice(0, 200)); } }"
        "process.stdout.write(JSON.stringify(errors));"
    )
    done = subprocess.run([shutil.which("node") or "node", "-e", script, str(KATEX)],
                          input=json.dumps(formulas), capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def test_katex_accepts_every_corpus_program():
    assert KATEX.exists(), "node_modules/katex is missing: run `make assets`"
    formulas = [f for entry in load_corpus() for f in program_latex(entry.program)]
    assert len(formulas) > 300
    assert _katex_errors(formulas) == []


@pytest.mark.slow
def test_katex_accepts_every_workload_source_program():
    from frontend import translate_file
    from workloads.registry import list_workloads

    formulas = []
    for workload in list_workloads():
        formulas.extend(program_latex(translate_file(workload.path).program))
    assert _katex_errors(formulas) == []
