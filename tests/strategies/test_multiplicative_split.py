"""multiplicative_split: X → X/s*s only with s proved non-zero, the proof quoted in the trace."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload
from .math_checks import assert_same_steps_byte_for_byte, assert_verifier_rejects, mutated

STRATEGY = "multiplicative_split"
WORKLOADS = ["level1/softmax", "level1/log_softmax", "level2/gemm_softmax"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_splits_an_operand_by_a_proved_positive_sum(workload_id, dtype):
    program = workload(workload_id, dtype)
    sites = candidates(program, STRATEGY)
    assert sites, f"{workload_id} has no product-free operand with a non-zero value in scope"
    step = apply_strategy(program, STRATEGY, sites[-1])
    s = step.params["s"]
    assert f"/{s}*{s}" in canonical(step.after.body)
    assert "proved non-zero" in step.trace.applicability and "exp(…) > 0" in step.trace.applicability
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_forgotten_multiplication_is_rejected_by_the_verifier():
    program = workload("level1/softmax")
    step = apply_strategy(program, STRATEGY, candidates(program, STRATEGY)[-1])
    s = step.params["s"]
    wrong = mutated(step, f"/{s}*{s}", f"/{s}")
    assert_verifier_rejects(wrong, program)


def test_values_of_unknown_sign_are_never_offered():
    program = leir("input A: f32[4, 8]\ninput W: f32[4]\noutput C: f32[4, 8]\n---\n"
                   "L^{4}_{i=0}L^{8}_{a=0}[S^{f32,g}_{i}=S^{f32,g}_{i}+A^{f32,g}_{i,a};];"
                   "L^{4}_{i=0}L^{8}_{a=0}[Q^{f32,g}_{i}=Q^{f32,g}_{i}+exp(A^{f32,g}_{i,a});];"
                   "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}+S^{f32,g}_{i}+W^{f32,g}_{i}"
                   "+Q^{f32,g}_{i};];")
    offered = {v for site in candidates(program, STRATEGY) for v in site.params[0].values}
    assert offered == {"Q^{f32,g}_{i}"}  # a sum of A (any sign) and the input W are not provably non-zero
    site = candidates(program, STRATEGY)[0]
    with pytest.raises(NotApplicableError, match="not provably non-zero"):
        get_strategy(STRATEGY).apply(program, site, {"s": "S^{f32,g}_{i}"})


def test_sqrt_plus_eps_of_a_square_is_positive():
    program = leir("input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
                   "L^{4}_{i=0}L^{8}_{a=0}[R^{f32,g}_{i}=R^{f32,g}_{i}+A^{f32,g}_{i,a}*A^{f32,g}_{i,a};];"
                   "L^{4}_{i=0}[N^{f32,g}_{i}=sqrt(R^{f32,g}_{i}/8+1e-05);];"
                   "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}+N^{f32,g}_{i};];")
    sites = candidates(program, STRATEGY)
    assert any("N^{f32,g}_{i}" in site.params[0].values for site in sites)


def test_a_max_reduction_is_not_positive_by_induction():
    program = leir("input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
                   "L^{4}_{i=0}L^{8}_{a=0}[M^{f32,g}_{i}=max(M^{f32,g}_{i},A^{f32,g}_{i,a});];"
                   "L^{4}_{i=0}[N^{f32,g}_{i}=sqrt(M^{f32,g}_{i})+1;];"
                   "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}+M^{f32,g}_{i}+N^{f32,g}_{i};];")
    offered = {v for site in candidates(program, STRATEGY) for v in site.params[0].values}
    assert offered == {"N^{f32,g}_{i}"}  # the row max of A can be negative; sqrt(…)+1 cannot be 0


def test_same_program_gives_the_same_steps_byte_for_byte():
    program = workload("level1/softmax")
    assert_same_steps_byte_for_byte(program, STRATEGY)
