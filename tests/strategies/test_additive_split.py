"""additive_split: X → X+s-s with s a value in scope (statistics first)."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload
from .math_checks import assert_same_steps_byte_for_byte, assert_verifier_rejects, mutated

STRATEGY = "additive_split"
WORKLOADS = ["level1/softmax", "level1/matmul", "level2/siamese_conv1d"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_adds_and_subtracts_an_existing_value(workload_id, dtype):
    program = workload(workload_id, dtype)
    sites = candidates(program, STRATEGY)
    assert sites, f"{workload_id} has no operand with a value in scope"
    step = apply_strategy(program, STRATEGY, sites[0])
    s = step.params["s"]
    assert f"+{s}-{s}" in canonical(step.after.body)
    assert "enabling step" in step.trace.rationale
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_the_running_max_is_offered_first_after_prefix_max():
    program = apply_strategy(workload("level1/softmax"), "normal_loop_max_to_prefix_max", 0).after
    site = next(s for s in candidates(program, STRATEGY) if s.path == (1, 0))
    assert site.params[0].values[0] == "F^{f32,g}_{tx,a}"


def test_mismatched_split_value_is_rejected_by_the_verifier():
    program = workload("level1/softmax")
    step = apply_strategy(program, STRATEGY, 0, {"s": "D^{f32,g}_{tx}"})
    x = step.site.where.split()[2]
    wrong = mutated(step, f"{x}+D^{{f32,g}}_{{tx}}-D^{{f32,g}}_{{tx}}", f"{x}+D^{{f32,g}}_{{tx}}-A^{{f32,g}}_{{tx,a}}")
    assert_verifier_rejects(wrong, program)


def test_accumulators_and_conditions_are_not_operands():
    program = leir("input A: f32[4, 8]\noutput C: f32[4]\n---\n"
                   "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+if_then_else(A^{f32,g}_{i,a}<0,0,"
                   "A^{f32,g}_{i,a});];")
    assert candidates(program, STRATEGY) == []  # only A, and no other value exists to split it by
    from strategies import Site

    with pytest.raises(NotApplicableError):
        get_strategy(STRATEGY).apply(program, Site((0, 0), (("operand", (0,)),)), {"s": "A^{f32,g}_{i,a}"})


def test_guarded_reads_are_not_offered_as_values():
    # A_{a-1} is read only where a>=1: as s for the operand G_{a} it would leave A at a=0
    program = leir("input A: f32[8]\ninput G: f32[8]\noutput C: f32[8]\n---\n"
                   "L^{8}_{a=0}[C^{f32,g}_{a}=if_then_else(a-1<0,0,A^{f32,g}_{a-1})+G^{f32,g}_{a};];")
    sites = {site.get("operand"): site.params[0].values for site in candidates(program, STRATEGY)}
    assert sites == {(0, 2): ("G^{f32,g}_{a}",)}  # A_{a-1} may be split (by G), never used as s
    step = apply_strategy(program, STRATEGY, 0)
    assert_interpreter_agrees(step)


def test_same_program_gives_the_same_steps_byte_for_byte():
    program = workload("level1/softmax")
    assert_same_steps_byte_for_byte(program, STRATEGY)
