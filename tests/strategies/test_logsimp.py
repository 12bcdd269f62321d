"""logsimp: applies on real workload states (verified in f32 and f64); log(A)+log(D) is NaN for negative A, D while log(A*D) is not is refused."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .algebra_checks import check_case
from .helpers import leir

CASES = [
    ("level1/log_sigmoid_terms", (("compute_inline", 0), ("expand_log", 0))),
    ("level1/logsigmoid_mix", ()),
    ("level2/log_activation_mix", ()),
]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(("workload_id", "steps"), CASES)
def test_logsimp_verifies_on_real_states(workload_id, steps, dtype):
    check_case(workload_id, dtype, steps, "logsimp")


REFUSED = ("input A: f32[8]\ninput D: f32[8]\ninput E: f32[8]\noutput C: f32[8]\n---\n"
           "L^{8}_{i=0}[C^{f32,g}_{i}=log(A^{f32,g}_{i})+log(D^{f32,g}_{i});];")


def test_logsimp_refuses_where_it_does_not_apply():
    """Log(A)+log(D) is NaN for negative A, D while log(A*D) is not."""
    program = leir(REFUSED)
    assert candidates(program, "logsimp") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "logsimp", Site((0, 0)))
    with pytest.raises(NotApplicableError):
        get_strategy("logsimp").apply(program, Site((0, 0)), {})
