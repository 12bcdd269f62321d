"""common_subexpression_elimination: a repeated sub-expression is computed once; unsafe reuse refuses."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level1/softmax", "level1/layer_norm", "level2/gemm_softmax"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_computes_a_repeated_sub_expression_once(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "common_subexpression_elimination")
    assert sites, f"{workload_id} repeats no sub-expression"
    step = apply_strategy(program, "common_subexpression_elimination", sites[0])
    text = step.site.get("subexpression")
    assert canonical(program.body).count(text) >= 2
    assert canonical(step.after.body).count(text) == 1
    assert_interpreter_agrees(step)
    assert_verifies(step)


REFUSALS = {
    "writes D": ("input A: f32[8]\noutput C: f32[8]\noutput E: f32[8]\n---\n"
                 "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i};];L^{8}_{i=0}[C^{f32,g}_{i}=exp(D^{f32,g}_{i})+1;];"
                 "L^{8}_{i=0}[D^{f32,g}_{i}=D^{f32,g}_{i}*2;];L^{8}_{i=0}[E^{f32,g}_{i}=exp(D^{f32,g}_{i})-1;];"),
    "different extents": ("input A: f32[8]\noutput C: f32[8]\noutput E: f32[4]\n---\n"
                          "L^{8}_{i=0}[C^{f32,g}_{i}=exp(A^{f32,g}_{i})+1;];"
                          "L^{4}_{i=0}[E^{f32,g}_{i}=exp(A^{f32,g}_{i})-1;];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_when_the_occurrences_may_differ(rule):
    program = leir(REFUSALS[rule])
    text = "exp(D^{f32,g}_{i})" if "D" in rule else "exp(A^{f32,g}_{i})"
    assert text not in [s.get("subexpression") for s in candidates(program, "common_subexpression_elimination")]
    site = Site((1, 0), (("subexpression", text),))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "common_subexpression_elimination", site)
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy("common_subexpression_elimination").apply(program, site, {})
