"""tensor_concat_to_fuse_operators: look-alike independent blocks run as one; others refuse."""

from __future__ import annotations

import pytest

from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

STRATEGY = "tensor_concat_to_fuse_operators"
WORKLOADS = ["level1/matmul_lower_triangular", "level1/cosine_similarity_loss", "level1/view_permute"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_concatenates_two_blocks_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, STRATEGY)
    assert sites, f"{workload_id} has no look-alike pair"
    step = apply_strategy(program, STRATEGY, sites[-1])
    (index,) = step.site.path
    var = step.site.get("axis")
    doubled = [lp for b in step.after.body.blocks for lp in b.loops if lp.var == var]
    original = next(lp for lp in program.body.blocks[index].loops if lp.var == var)
    assert any(lp.extent == 2 * original.extent for lp in doubled)
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_matmuls_sharing_an_input_concatenate_their_weights():
    program = leir("input A: f32[4, 8]\nparam W: f32[6, 8]\nparam Q: f32[6, 8]\noutput C: f32[4, 6]\n"
                   "output D: f32[4, 6]\n---\n"
                   "L^{4}_{i=0}L^{6}_{a=0}L^{8}_{c=0}[C^{f32,g}_{i,a}=C^{f32,g}_{i,a}+A^{f32,g}_{i,c}*W^{f32,g}_{a,c};];"
                   "L^{4}_{i=0}L^{6}_{a=0}L^{8}_{c=0}[D^{f32,g}_{i,a}=D^{f32,g}_{i,a}+A^{f32,g}_{i,c}*Q^{f32,g}_{a,c};];")
    sites = candidates(program, STRATEGY)
    assert [s.get("axis") for s in sites] == ["a"]  # i is not a bare subscript of W; c is a reduction axis
    step = apply_strategy(program, STRATEGY, sites[0])
    assert "L^{12}_{a=0}" in step.trace.change
    assert_interpreter_agrees(step)
    assert_verifies(step)


REFUSALS = {
    "depend on each other": ("input A: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                             "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}*2;];L^{8}_{i=0}[D^{f32,g}_{i}=C^{f32,g}_{i}*2;];"),
    "different expressions": ("input A: f32[8]\ninput E: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                              "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}*2;];L^{8}_{i=0}[D^{f32,g}_{i}=E^{f32,g}_{i}+2;];"),
    "reduction axis": ("input A: f32[8, 4]\ninput E: f32[8, 4]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                       "L^{8}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+A^{f32,g}_{i,a};];"
                       "L^{8}_{i=0}L^{4}_{a=0}[D^{f32,g}_{i}=D^{f32,g}_{i}+E^{f32,g}_{i,a};];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_pairs_that_are_not_independent_look_alikes(rule):
    program = leir(REFUSALS[rule])
    axis = "a" if rule == "reduction axis" else "i"
    assert axis not in [s.get("axis") for s in candidates(program, STRATEGY)]
    site = Site((0,), (("axis", axis),))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, STRATEGY, site)
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy(STRATEGY).apply(program, site, {})
