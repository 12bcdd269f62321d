"""apart: applies on real workload states (verified in f32 and f64); a proper fraction in D is already its own decomposition is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/gelu_tanh", ()),
    ("level1/mish", ()),
    ("level1/tanh", (("together", 0),)),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_apart_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "apart")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}/(D^{f32,g}_{i}+1);];")


def test_apart_refuses_where_it_does_not_apply():
    """A proper fraction in D is already its own decomposition."""
    program = leir(REFUSED)
    assert candidates(program, "apart") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "apart", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("apart").apply(program, Site((0, 0)), {})
