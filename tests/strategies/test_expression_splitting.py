"""expression_splitting: a sub-expression moves into its own block; guarded or unstable ones refuse."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

WORKLOADS = ["level1/softmax", "level1/layer_norm", "level1/gelu"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_splits_a_sub_expression_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "expression_splitting")
    assert sites, f"{workload_id} has no separable sub-expression"
    step = apply_strategy(program, "expression_splitting", sites[-1])
    assert len(step.after.body.blocks) == len(program.body.blocks) + 1
    assert step.site.get("subexpression") in canonical(step.after.body.blocks[step.site.path[0]])
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_loop_invariant_sub_expression_is_computed_once_per_invariant_point():
    program = workload("level1/layer_norm")
    site = next(s for s in candidates(program, "expression_splitting")
                if s.get("subexpression").startswith("sqrt("))
    step = apply_strategy(program, "expression_splitting", site)
    assert canonical(step.after.body.blocks[site.path[0]]).startswith("B^{4}_{tx=0}[")
    assert "evaluated 4 times instead of 4096" in step.trace.rationale


GUARDED = ("input A: f32[8]\noutput C: f32[9]\n---\n"
           "L^{9}_{i=0}[C^{f32,g}_{i}=if_then_else(1<=i,exp(A^{f32,g}_{i-1}),0)+1;];")
UNSTABLE = ("input A: f32[8]\noutput C: f32[8]\n---\n"
            "L^{8}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*2;C^{f32,g}_{i}=exp(D^{f32,g}_{i})+1;];")


def test_refuses_a_sub_expression_under_if_then_else():
    program = leir(GUARDED)
    offered = [s.get("subexpression") for s in candidates(program, "expression_splitting")]
    assert "exp(A^{f32,g}_{i-1})" not in offered
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "expression_splitting", Site((0, 0), (("expr", (0, 1)),)))


def test_refuses_a_sub_expression_reading_what_its_block_writes():
    program = leir(UNSTABLE)
    assert candidates(program, "expression_splitting") == []
    site = Site((0, 1), (("expr", (0,)), ("subexpression", "exp(D^{f32,g}_{i})")))
    with pytest.raises(NotApplicableError, match="writes D"):
        get_strategy("expression_splitting").apply(program, site, {})
