"""The SymPy bridge: faithful reading, printing back with the original nodes, and the positivity proofs."""

from __future__ import annotations

import pytest

from leir.parser import parse_expr
from leir.printer import canonical, expr_text
from strategies.math.sympy_bridge import (
    BridgeError,
    Prover,
    region_of,
    rewrite_region,
    safety_problem,
    to_leir,
    translate,
)

from .helpers import leir

SIG = "input A: f32[8]\ninput D: f32[8]\noutput C: f32[8]\n---\n"


def _expr(text: str):
    return parse_expr(text)


def test_opaque_nodes_print_back_verbatim():
    text = "if_then_else(A^{f32,g}_{i}>0,A^{f32,g}_{i},0)*max(D^{f32,g}_{i},1e-05)+erf(A^{f32,g}_{i})"
    tr = translate(_expr(text), "f32")
    assert len(tr.atoms) == 3  # the guard, the max and the erf are symbols SymPy cannot look into
    back = expr_text(to_leir(tr.sym, tr))
    for fragment in ("if_then_else(A^{f32,g}_{i}>0,A^{f32,g}_{i},0)", "max(D^{f32,g}_{i},1e-05)",
                     "erf(A^{f32,g}_{i})"):
        assert fragment in back


def test_literals_keep_their_spelling_and_rationals_print_as_float_division():
    tr = translate(_expr("A^{f32,g}_{i}*1e-05+D^{f32,g}_{i}/2"), "f32")
    back = expr_text(to_leir(tr.sym, tr))
    assert "1e-05" in back and "/2" in back


def test_reading_refuses_what_sympy_would_cancel_silently():
    with pytest.raises(BridgeError, match="away on reading"):
        translate(_expr("A^{f32,g}_{i}/A^{f32,g}_{i}"), "f32")
    with pytest.raises(BridgeError, match="cancels a divisor"):
        translate(_expr("A^{f32,g}_{i}*D^{f32,g}_{i}/(A^{f32,g}_{i}*2)+A^{f32,g}_{i}"), "f32")


@pytest.mark.parametrize(("text", "provable"), [
    ("exp(A^{f32,g}_{i})", True),
    ("sqrt(A^{f32,g}_{i})+1e-05", True),
    ("A^{f32,g}_{i}*A^{f32,g}_{i}+1", True),
    ("max(A^{f32,g}_{i},1e-12)", True),
    ("2", True),
    ("sqrt(A^{f32,g}_{i}+1e-05)", False),  # A can be below -1e-05
    ("A^{f32,g}_{i}+1", False),
    ("A^{f32,g}_{i}*A^{f32,g}_{i}", False),  # zero at A = 0
])
def test_positivity_proofs(text, provable):
    tr = translate(_expr(text), "f32")
    why = Prover(tr).positive(tr.sym)
    assert (why is not None) is provable, why


def test_safety_names_an_unprovable_new_divisor():
    tr = translate(_expr("A^{f32,g}_{i}+D^{f32,g}_{i}"), "f32")
    d = tr.symbol_named("D^{f32,g}_{i}")
    problem, _ = safety_problem(tr.sym, tr.sym / d, tr)
    assert problem is not None and "divides by D^{f32,g}_{i}" in problem

    e = tr.symbol_named("A^{f32,g}_{i}")
    problem, proofs = safety_problem(tr.sym, tr.sym / (e * e + 1), tr)
    assert problem is None and "even power" in proofs[0] and "positive literal" in proofs[0]


def test_accumulation_prefix_stays_outside_the_rewrite():
    program = leir("input A: f32[8,4]\ninput D: f32[8,4]\noutput C: f32[8]\n---\n"
                   "L^{8}_{i=0}L^{4}_{k=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+A^{f32,g}_{i,k}*(D^{f32,g}_{i,k}+1);];")
    stmt = program.body.blocks[0].items[0]
    region = region_of(program, (0, 0), stmt)
    assert not isinstance(region, str) and expr_text(region.expr).startswith("A^")
    import sympy

    rw = rewrite_region(region, lambda tr: sympy.expand(tr.sym))
    assert not isinstance(rw, str)
    assert canonical(rw.new_stmt).startswith("C^{f32,g}_{i}=C^{f32,g}_{i}+")


def test_integer_statements_are_no_region():
    program = leir("input A: i32[8]\noutput C: i32[8]\n---\nL^{8}_{i=0}[C^{i32,g}_{i}=A^{i32,g}_{i}/2+1;];")
    reason = region_of(program, (0, 0), program.body.blocks[0].items[0])
    assert isinstance(reason, str) and "not a float dtype" in reason


def test_candidates_are_deterministic():
    from strategies import candidates

    from .helpers import workload

    program = workload("level1/gelu_tanh")
    first = [s.key for s in candidates(program, "expand_collect")]
    assert first and first == [s.key for s in candidates(program, "expand_collect")]
