"""cancellation: applies on real workload states (verified in f32 and f64); the common factor A can be zero, so cancelling it would hide a division by zero is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/tanh", (("expand_cancellation", 0),)),
    ("level1/new_gelu", (("expand_cancellation", 0),)),
    ("level1/softsign", (("expand_cancellation", 0),)),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_cancellation_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "cancellation")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=(A^{f32,g}_{i}*D^{f32,g}_{i}+A^{f32,g}_{i})/(A^{f32,g}_{i}*D^{f32,g}_{i});];")


def test_cancellation_refuses_where_it_does_not_apply():
    """The common factor A can be zero, so cancelling it would hide a division by zero."""
    program = leir(REFUSED)
    assert candidates(program, "cancellation") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "cancellation", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("cancellation").apply(program, Site((0, 0)), {})
