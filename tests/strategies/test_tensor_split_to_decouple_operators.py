"""tensor_split_to_decouple_operators: spatial cuts are exact, reduction cuts numerically equivalent."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

STRATEGY = "tensor_split_to_decouple_operators"
#: (workload, axis kind): one spatial and two reduction cuts.
CASES = [("level1/softmax", "spatial"), ("level1/layer_norm", "reduction"), ("level2/gemm_bias_relu", "reduction")]


@pytest.mark.parametrize(("workload_id", "axis"), CASES)
def test_cuts_an_axis_of_a_workload(workload_id, axis):
    program = workload(workload_id)
    site = next(s for s in candidates(program, STRATEGY) if s.where.startswith(f"the {axis} loop"))
    step = apply_strategy(program, STRATEGY, site)
    assert step.exactness.value == ("E" if axis == "spatial" else "N")
    assert len(step.after.body.blocks) == len(program.body.blocks) + 2
    at = step.params["at"]
    assert f"+{at}" in canonical(step.after.body.blocks[site.path[0] + 1])
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_cut_points_are_the_middle_then_the_quarters():
    program = workload("level1/softmax")
    site = next(s for s in candidates(program, STRATEGY) if s.get("axis") == "a")
    assert site.params[0].values == (128, 64, 192)


REFUSALS = {
    "prefix recurrence": ("input A: f32[8]\noutput C: f32[8]\n---\n"
                          "L^{8}_{i=0}[C^{f32,g}_{i}=if_then_else(i-1<0,0,C^{f32,g}_{i-1})+A^{f32,g}_{i};];"),
    "not a single statement": ("input A: f32[8]\noutput C: f32[8]\noutput D: f32[8]\n---\n"
                               "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};D^{f32,g}_{i}=A^{f32,g}_{i}*2;];"),
    "more than once per element": ("input A: f32[8, 4]\noutput C: f32[8]\n---\n"
                                   "L^{8}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i}=A^{f32,g}_{i,a};];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_blocks_whose_halves_would_not_be_independent(rule):
    program = leir(REFUSALS[rule])
    assert candidates(program, STRATEGY) == []
    site = Site((0,), (("axis", "i"),))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, STRATEGY, site, {"at": 4})
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy(STRATEGY).apply(program, site, {"at": 4})
