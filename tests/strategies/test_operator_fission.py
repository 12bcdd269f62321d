"""operator_fission: a fused block splits back at a seam; seams a dependence crosses are refused."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level1/rms_norm", "level2/conv2d_bias_relu", "level2/gemm_sigmoid_scale_residual"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_splits_a_block_that_fusion_produced(workload_id):
    original = workload(workload_id)
    fused = apply_strategy(original, "operator_fusion", 0).after  # a real state reached by a step
    sites = candidates(fused, "operator_fission")
    assert sites, f"{workload_id}: no seam in the fused state"
    step = apply_strategy(fused, "operator_fission", sites[0])
    assert len(step.after.body.blocks) == len(fused.body.blocks) + 1
    assert canonical(step.after.body) == canonical(original.body)
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_on_chip_intermediate_goes_back_to_global_memory():
    original = workload("level2/elementwise_chain")
    site = next(s for s in candidates(original, "operator_fusion") if s.params)
    fused = apply_strategy(original, "operator_fusion", site, {"scope": "l"}).after
    seam = next(s for s in candidates(fused, "operator_fission") if s.path == site.path)
    step = apply_strategy(fused, "operator_fission", seam)
    assert canonical(step.after.body) == canonical(original.body)
    assert "back to global memory" in step.trace.change


REFUSALS = {
    "different subscripts": ("input A: f32[8]\noutput C: f32[8]\n---\n"
                             "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;C^{f32,g}_{i}=D^{f32,g}_{7-i};];"),
    "distinct element": ("input A: f32[8]\noutput C: f32[8]\n---\n"
                         "L^{8}_{i=0}[S^{f32,g}=S^{f32,g}+A^{f32,g}_{i};C^{f32,g}_{i}=S^{f32,g};];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_a_seam_a_dependence_crosses(rule):
    program = leir(REFUSALS[rule])
    assert candidates(program, "operator_fission") == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "operator_fission", Site((0,), (("seam", 1),)))
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy("operator_fission").apply(program, Site((0,), (("seam", 1),)), {})


def test_independent_statements_of_one_block_separate():
    program = leir("input A: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                   "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;C^{f32,g}_{i}=A^{f32,g}_{i}+D^{f32,g}_{i};];")
    step = apply_strategy(program, "operator_fission", 0)
    assert canonical(step.after.body) == ("L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
                                          "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}+D^{f32,g}_{i};];")
    assert_interpreter_agrees(step)
