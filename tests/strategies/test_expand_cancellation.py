"""expand_cancellation: applies on real workload states (verified in f32 and f64); D+1 can be zero is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/softsign", ()),
    ("level1/silu", ()),
    ("level1/tanh", ()),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_expand_cancellation_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "expand_cancellation")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}/(D^{f32,g}_{i}+1);];")


def test_expand_cancellation_refuses_where_it_does_not_apply():
    """D+1 can be zero: no provably positive factor to multiply through by."""
    program = leir(REFUSED)
    assert candidates(program, "expand_cancellation") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "expand_cancellation", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("expand_cancellation").apply(program, Site((0, 0)), {})
