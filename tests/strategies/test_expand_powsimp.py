"""expand_powsimp: applies on real workload states (verified in f32 and f64); exponents that are not sums give nothing to split is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/softmax", ()),
    ("level1/log_softmax", ()),
    ("level1/cross_entropy", ()),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_expand_powsimp_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "expand_powsimp")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=exp(A^{f32,g}_{i})*exp(D^{f32,g}_{i});];")


def test_expand_powsimp_refuses_where_it_does_not_apply():
    """Exponents that are not sums give nothing to split."""
    program = leir(REFUSED)
    assert candidates(program, "expand_powsimp") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "expand_powsimp", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("expand_powsimp").apply(program, Site((0, 0)), {})
