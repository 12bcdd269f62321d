"""powsimp: applies on real workload states (verified in f32 and f64); sqrt(a)*sqrt(b) needs a, b >= 0 to combine is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/softmax", (("expand_powsimp", 0),)),
    ("level1/log_softmax", (("expand_powsimp", 0),)),
    ("level1/cross_entropy", (("expand_powsimp", 0),)),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_powsimp_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "powsimp")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=sqrt(A^{f32,g}_{i})*sqrt(D^{f32,g}_{i});];")


def test_powsimp_refuses_where_it_does_not_apply():
    """Sqrt(a)*sqrt(b) needs a, b >= 0 to combine."""
    program = leir(REFUSED)
    assert candidates(program, "powsimp") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "powsimp", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("powsimp").apply(program, Site((0, 0)), {})
