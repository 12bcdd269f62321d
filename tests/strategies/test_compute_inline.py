"""compute_inline: a value used only by the next same-header block is substituted; other uses refuse."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level1/layer_norm", "level1/rms_norm", "level1/cumsum_exclusive"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_inlines_a_producer_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "compute_inline")
    assert sites, f"{workload_id} has nothing to inline"
    step = apply_strategy(program, "compute_inline", sites[-1])
    name = step.site.get("tensor")
    assert f"{name}^{{" in canonical(program.body) and f"{name}^{{" not in canonical(step.after.body)
    assert len(step.after.body.blocks) == len(program.body.blocks) - 1
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_inlined_read_at_a_shifted_subscript_substitutes_the_indices():
    program = leir("input A: f32[8, 9]\noutput C: f32[8, 8]\n---\n"
                   "L^{8}_{i=0}L^{8}_{a=0}[D^{f32,g}_{i,a}=A^{f32,g}_{i,a+1}*2;];"
                   "L^{8}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=D^{f32,g}_{i,7-a}+1;];")
    step = apply_strategy(program, "compute_inline", 0)
    assert canonical(step.after.body) == "L^{8}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,7-a+1}*2+1;];"
    assert_interpreter_agrees(step)


REFUSALS = {
    "read outside": ("input A: f32[8]\noutput C: f32[8]\noutput E: f32[8]\n---\n"
                     "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;];L^{8}_{i=0}[C^{f32,g}_{i}=D^{f32,g}_{i}+1;];"
                     "L^{8}_{i=0}[E^{f32,g}_{i}=D^{f32,g}_{i}-1;];"),
    "different iterations": ("input A: f32[8]\noutput C: f32[8, 2]\n---\n"
                             "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
                             "L^{8}_{i=0}L^{2}_{a=0}[C^{f32,g}_{i,a}=D^{f32,g}_{i}+1;];"),
    "not a plain value": ("input A: f32[8, 4]\noutput C: f32[8]\n---\n"
                          "L^{8}_{i=0}L^{4}_{a=0}[D^{f32,g}_{i}=D^{f32,g}_{i}+A^{f32,g}_{i,a};];"
                          "L^{8}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i}=D^{f32,g}_{i}*2;];"),
    "another dtype": ("input A: f32[8]\noutput C: f64[8]\n---\n"
                      "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}/3;];L^{8}_{i=0}[C^{f64,g}_{i}=D^{f32,g}_{i};];"),
    # bf16 and fp8 compute in f32 and round on the store: inlined, D's rounding would disappear (issue 46)
    "rounds once per store": ("input A: bf16[8]\noutput C: bf16[8]\n---\n"
                              "L^{8}_{i=0}[D^{bf16,g}_{i}=A^{bf16,g}_{i}/3;];"
                              "L^{8}_{i=0}[C^{bf16,g}_{i}=D^{bf16,g}_{i}*3;];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_when_the_value_is_not_private_to_the_next_block(rule):
    program = leir(REFUSALS[rule])
    assert candidates(program, "compute_inline") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "compute_inline", Site((0,), (("tensor", "D"),)))
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy("compute_inline").apply(program, Site((0,), (("tensor", "D"),)), {})
