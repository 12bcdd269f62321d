"""operator_fusion: adjacent same-header blocks fuse; reductions, shifted reads and unrelated blocks refuse."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level1/layer_norm", "level2/gemm_bias_relu", "level2/elementwise_chain"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_fuses_two_blocks_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "operator_fusion")
    assert sites, f"{workload_id} has no fusable pair"
    step = apply_strategy(program, "operator_fusion", len(sites) - 1)
    (index,) = step.site.path
    assert len(step.after.body.blocks) == len(program.body.blocks) - 1
    fused = step.after.body.blocks[index]
    assert fused.items == program.body.blocks[index].items + program.body.blocks[index + 1].items
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_private_intermediate_may_move_to_local_memory():
    program = workload("level2/elementwise_chain")
    site = next(s for s in candidates(program, "operator_fusion") if s.params)
    assert site.params[0].values == ("g", "l", "s")
    step = apply_strategy(program, "operator_fusion", site, {"scope": "l"})
    assert ",l}" in canonical(step.after.body)
    assert "local memory" in step.trace.change
    assert_interpreter_agrees(step)
    assert_verifies(step)


REFUSALS = {
    "a reduction": ("input A: f32[8, 4]\noutput C: f32[8]\n---\n"
                    "L^{8}_{i=0}L^{4}_{a=0}[D^{f32,g}_{i}=D^{f32,g}_{i}+A^{f32,g}_{i,a};];"
                    "L^{8}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i}=D^{f32,g}_{i}*2;];"),
    "different subscripts": ("input A: f32[8]\noutput C: f32[8]\n---\n"
                             "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
                             "L^{8}_{i=0}[C^{f32,g}_{i}=D^{f32,g}_{7-i};];"),
    "different iterations": ("input A: f32[8]\noutput C: f32[8]\n---\n"
                             "P^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
                             "L^{8}_{i=0}[C^{f32,g}_{i}=D^{f32,g}_{i}+1;];"),
    "does not read": ("input A: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                      "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
                      "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}+1;];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_where_a_dependence_or_the_header_forbids(rule):
    program = leir(REFUSALS[rule])
    assert candidates(program, "operator_fusion") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "operator_fusion", Site((0,)))
    strategy = __import__("strategies", fromlist=["get_strategy"]).get_strategy("operator_fusion")
    with pytest.raises(NotApplicableError, match=rule.split()[-1]):
        strategy.apply(program, Site((0,)), {})


def test_fission_after_fusion_and_fusion_after_fission_return_the_real_states():
    original = workload("level1/layer_norm")
    fused = apply_strategy(original, "operator_fusion", 0)
    seam = next(s for s in candidates(fused.after, "operator_fission") if s.path == fused.site.path)
    split = apply_strategy(fused.after, "operator_fission", seam)
    assert canonical(split.after.body) == canonical(original.body)
    again = apply_strategy(split.after, "operator_fusion", fused.site)
    assert canonical(again.after.body) == canonical(fused.after.body)
    assert_verifies(split)
