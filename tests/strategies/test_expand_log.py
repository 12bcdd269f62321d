"""expand_log: applies on real workload states (verified in f32 and f64); A and D can be negative is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level2/log_activation_mix", (("compute_inline", 1),)),
    ("level1/logsigmoid_mix", (("compute_inline", 0),)),
    ("level1/log_sigmoid_terms", (("compute_inline", 0), ("compute_inline", 0))),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_expand_log_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "expand_log")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=log(A^{f32,g}_{i}*D^{f32,g}_{i});];")


def test_expand_log_refuses_where_it_does_not_apply():
    """A and D can be negative: log(A*D) = log(A)+log(D) is unprovable."""
    program = leir(REFUSED)
    assert candidates(program, "expand_log") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "expand_log", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("expand_log").apply(program, Site((0, 0)), {})
