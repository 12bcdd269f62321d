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
