"""normal_loop_max_to_prefix_max: a max reduction becomes a running max, bitwise exact; others refuse."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload
from .math_checks import assert_same_steps_byte_for_byte, assert_verifier_rejects, mutated

STRATEGY = "normal_loop_max_to_prefix_max"
WORKLOADS = ["level1/softmax", "level1/log_softmax", "level1/argmax_dim"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_running_max_of_a_workload_is_bitwise_exact(workload_id, dtype):
    program = workload(workload_id, dtype)
    sites = candidates(program, STRATEGY)
    assert sites, f"{workload_id} has no max reduction over one axis"
    step = apply_strategy(program, STRATEGY, sites[0])
    text = canonical(step.after.body)
    assert "if_then_else(" in text and "-1<0,-inf," in text  # the guarded first iteration
    assert_interpreter_agrees(step)
    assert assert_verifies(step).outcome.value == "equal_pass"


def test_reduced_axis_in_the_middle_moves_into_the_nested_block():
    program = workload("level1/log_softmax")
    step = apply_strategy(program, STRATEGY, 0)
    first = canonical(step.after.body.blocks[0])
    assert first.startswith("B^{4}_{tx=0}L^{32}_{c=0}[L^{32}_{a=0}[")
    assert first.endswith("D^{f32,g}_{tx,c}=F^{f32,g}_{tx,c,31};];")


def test_off_by_one_last_element_is_rejected_by_the_verifier():
    # rows of 4: the element the off-by-one drops is a row's max in about one row of four
    program = leir("input A: f32[64, 4]\noutput C: f32[64]\n---\n"
                   "L^{64}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i}=max(C^{f32,g}_{i},A^{f32,g}_{i,a});];")
    step = apply_strategy(program, STRATEGY, 0)
    assert_verifies(step)
    wrong = mutated(step, "C^{f32,g}_{i}=D^{f32,g}_{i,3}", "C^{f32,g}_{i}=D^{f32,g}_{i,2}")
    assert_verifier_rejects(wrong, program)


REFUSALS = {
    "not a max reduction": ("input A: f32[4, 8]\noutput C: f32[4]\n---\n"
                            "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+A^{f32,g}_{i,a};];"),
    "reduces 2 axes": ("input A: f32[4, 8]\noutput C: f32[1]\n---\n"
                       "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{0}=max(C^{f32,g}_{0},A^{f32,g}_{i,a});];"),
    "not serial": ("input A: f32[4, 8]\noutput C: f32[4]\n---\n"
                   "L^{4}_{i=0}P^{8}_{a=0}[C^{f32,g}_{i}=max(C^{f32,g}_{i},A^{f32,g}_{i,a});];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_what_is_not_a_single_axis_serial_max(rule):
    program = leir(REFUSALS[rule])
    assert candidates(program, STRATEGY) == []
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy(STRATEGY).apply(program, Site((0, 0)), {})


def test_operand_order_and_other_names_still_match():
    program = leir("input Xq: f64[3, 5]\noutput Zz: f64[3]\n---\n"
                   "L^{3}_{r=0}L^{5}_{k=0}[Mm^{f64,g}_{r}=max(Xq^{f64,g}_{r,k}*2,Mm^{f64,g}_{r});];"
                   "L^{3}_{r=0}[Zz^{f64,g}_{r}=Mm^{f64,g}_{r}+1;];")
    step = apply_strategy(program, STRATEGY, 0)
    assert "max(Xq^{f64,g}_{r,k}*2,if_then_else(k-1<0,-inf," in canonical(step.after.body)
    assert_interpreter_agrees(step)


def test_same_program_gives_the_same_steps_byte_for_byte():
    program = workload("level1/log_softmax")
    assert_same_steps_byte_for_byte(program, STRATEGY)
