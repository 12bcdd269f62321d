"""together: applies on real workload states (verified in f32 and f64); a literal denominator is no fraction to combine is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/sigmoid", ()),
    ("level1/silu", ()),
    ("level1/tanh", ()),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_together_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "together")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}/2+D^{f32,g}_{i};];")


def test_together_refuses_where_it_does_not_apply():
    """A literal denominator is no fraction to combine."""
    program = leir(REFUSED)
    assert candidates(program, "together") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "together", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("together").apply(program, Site((0, 0)), {})


def _rationale(text):
    program = leir(text)
    site = candidates(program, "together")[0]
    return apply_strategy(program, "together", site).trace.rationale


def test_the_rationale_counts_the_divisions_it_claims_to_save():
    """Sigmoid's 1/(1+exp(-A)) has one division and keeps one: no "one division instead of one per
    fraction"; two fractions over different denominators do become one division."""
    one = _rationale("input A: f32[8]\noutput C: f32[8]\n---\n"
                     "L^{8}_{i=0}[C^{f32,g}_{i}=1/(1+exp(-A^{f32,g}_{i}));];")
    assert "instead of one per fraction" not in one
    assert "1 division before and after" in one and "saves no division" in one
    two = _rationale("input A: f32[8]\ninput D: f32[8]\noutput C: f32[8]\n---\n"
                     "L^{8}_{i=0}[C^{f32,g}_{i}=1/(1+exp(A^{f32,g}_{i}))+1/(2+exp(D^{f32,g}_{i}));];")
    assert "1 division instead of 2 divisions" in two
