"""loop_unrolling: short serial loops become U; other loops are refused."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level1/layer_norm", "level1/conv2d", "level2/conv2d_groupnorm_silu"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_unrolls_a_short_loop_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "loop_unrolling")
    assert sites, f"{workload_id} has no short serial loop"
    step = apply_strategy(program, "loop_unrolling", len(sites) - 1)
    var = step.site.get("loop")
    assert "U^{" in canonical(step.after.body) and f"_{{{var}=0}}" in canonical(step.after.body)
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_refuses_long_and_non_serial_loops():
    program = leir("input A: f32[64, 4]\noutput C: f32[64, 4]\n---\n"
                   "P^{64}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}*2;];")
    sites = candidates(program, "loop_unrolling")
    assert [s.get("loop") for s in sites] == ["a"]  # the P loop and any extent > 16 are not sites
    with pytest.raises(NotApplicableError, match="no legal site"):
        apply_strategy(program, "loop_unrolling", Site((0,), (("loop", "i"),)))


def test_same_program_gives_the_same_step_byte_for_byte():
    program = workload("level1/layer_norm")
    first = apply_strategy(program, "loop_unrolling", 0)
    again = apply_strategy(workload("level1/layer_norm"), "loop_unrolling", 0)
    assert canonical(first.after.body) == canonical(again.after.body)
    assert first.trace.render() == again.trace.render()
