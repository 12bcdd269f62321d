"""exponential_split: exp(U-V) through an existing shift s; after a running max this is online softmax's step."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import apply_strategy, candidates

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload
from .math_checks import assert_same_steps_byte_for_byte, assert_verifier_rejects, mutated

STRATEGY = "exponential_split"
WORKLOADS = ["level1/softmax", "level1/log_softmax", "level2/gemm_softmax"]


def after_prefix_max(workload_id: str, dtype: str):
    """The state after normal_loop_max_to_prefix_max: the running max is the value exp(X-M) shifts by."""
    return apply_strategy(workload(workload_id, dtype), "normal_loop_max_to_prefix_max", 0).after


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_splits_the_softmax_exponent_through_the_running_max(workload_id, dtype):
    program = after_prefix_max(workload_id, dtype)
    sites = candidates(program, STRATEGY)
    assert sites, f"{workload_id} has no exp(U-V) with a shift in scope"
    site = sites[0]
    s = site.params[0].values[0]
    assert s.startswith("F^") or "," in s  # the running max (a prefix tensor) is offered first
    step = apply_strategy(program, STRATEGY, site, {"s": s, "form": "product"})
    assert f"-{s})*exp({s}-" in canonical(step.after.body)
    assert "online softmax" in step.trace.rationale
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_quotient_form_verifies():
    program = after_prefix_max("level1/softmax", "f32")
    step = apply_strategy(program, STRATEGY, 0, {"form": "quotient"})
    assert ")/exp(" in canonical(step.after.body)
    assert_verifies(step)


def test_wrong_sign_in_the_second_factor_is_rejected_by_the_verifier():
    program = after_prefix_max("level1/softmax", "f32")
    step = apply_strategy(program, STRATEGY, 0, {"form": "product"})
    s = step.params["s"]
    text = canonical(step.after.body)
    start = text.index(f"*exp({s}-") + len(f"*exp({s}-")
    v = text[start:text.index(")", start) + 0]
    wrong = mutated(step, f"*exp({s}-{v})", f"*exp({v}-{s})")
    assert_verifier_rejects(wrong, program)


def test_the_shift_is_never_an_operand_of_the_difference():
    program = workload("level1/softmax")  # the row max D is V itself, A is U: nothing to shift by
    assert candidates(program, STRATEGY) == []
    other = leir("input A: f32[4, 8]\ninput Sm: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
                 "L^{4}_{i=0}L^{8}_{a=0}[Mx^{f32,g}_{i}=max(Mx^{f32,g}_{i},Sm^{f32,g}_{i,a});];"
                 "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=exp(A^{f32,g}_{i,a}*2-Sm^{f32,g}_{i,a});];")
    (site,) = candidates(other, STRATEGY)
    assert site.params[0].values == ("Mx^{f32,g}_{i}", "A^{f32,g}_{i,a}")
    assert_interpreter_agrees(apply_strategy(other, STRATEGY, site))


def test_same_program_gives_the_same_steps_byte_for_byte():
    program = workload("level2/gemm_softmax")
    program = apply_strategy(program, "normal_loop_max_to_prefix_max", 0).after
    assert_same_steps_byte_for_byte(program, STRATEGY)


def test_a_running_max_over_masked_scores_is_not_a_shift():
    # a fully masked prefix has running max -inf, and exp(-inf-(-inf)) is NaN: the verifier rejected it
    program = after_prefix_max("level2/mha_causal", "f32")
    offered = {v for site in candidates(program, STRATEGY) for v in site.params[0].values}
    assert not any(v.startswith("Am^") for v in offered)
    unmasked = after_prefix_max("level2/mha", "f32")
    assert candidates(unmasked, STRATEGY)
