"""expression_reorder: independent neighbours swap; a flow, anti or output dependence refuses."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level2/elementwise_chain", "level1/matmul_lower_triangular", "level1/cosine_similarity_loss"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_swaps_two_independent_blocks_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "expression_reorder")
    assert sites, f"{workload_id} has no independent neighbours"
    step = apply_strategy(program, "expression_reorder", sites[0])
    (i,) = step.site.path
    assert step.after.body.blocks[i] == program.body.blocks[i + 1]
    assert step.after.body.blocks[i + 1] == program.body.blocks[i]
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_swaps_independent_statements_of_one_block():
    program = leir("input A: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                   "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;C^{f32,g}_{i}=A^{f32,g}_{i}+1;];")
    step = apply_strategy(program, "expression_reorder", Site((0, 0)))
    assert canonical(step.after.body) == "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}+1;D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
    assert_interpreter_agrees(step)


REFUSALS = {
    "anti": ("input A: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
             "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i};];L^{8}_{i=0}[C^{f32,g}_{i}=D^{f32,g}_{i}*2;];"
             "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}+1;];"),
    "flow": ("input A: f32[8]\noutput C: f32[8]\n---\n"
             "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i};];L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*3;];"
             "L^{8}_{i=0}[C^{f32,g}_{i}=D^{f32,g}_{i}*2;];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_to_reorder_across_a_dependence(rule):
    program = leir(REFUSALS[rule])
    site = Site((1,))  # write-after-read (anti) / read-after-write (flow) between blocks 2 and 3
    assert site.path not in [s.path for s in candidates(program, "expression_reorder")]
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "expression_reorder", site)
    with pytest.raises(NotApplicableError, match=f"{rule} dependence on D"):
        get_strategy("expression_reorder").apply(program, site, {})
