"""loop_split: a spatial loop becomes outer x inner with i -> i*f+k; reductions and bad factors are refused."""

from __future__ import annotations

import pytest

from leir.printer import canonical, loop_text
from strategies import InvalidParamsError, Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/conv2d", "level1/softmax"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_splits_a_spatial_loop_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "loop_split")
    assert sites, f"{workload_id} has no splittable loop"
    site = sites[-1]
    factor = site.params[0].values[-1]
    step = apply_strategy(program, "loop_split", site, {"factor": factor})
    var = site.get("loop")
    text = canonical(step.after.body)
    assert f"{var}*{factor}+" in text
    assert step.exactness.value == "E"
    assert f"factor={factor}" in step.trace.change and var in step.trace.applicability
    check_step(step)


def test_refuses_reduction_loops_prime_extents_and_non_divisors():
    program = workload("level1/matmul")  # B^{64}_{tx}L^{64}_{a}L^{64}_{c}: c is the reduction axis
    assert [s.get("loop") for s in candidates(program, "loop_split")] == ["tx", "a"]
    assert_refused(program, "loop_split", Site((0,), (("loop", "c"),)))
    reason = refusal_reason(program, "loop_split", Site((0,), (("loop", "c"),)), {"factor": 8})
    assert "carries a reduction" in reason
    prime = leir("input A: f32[7]\noutput C: f32[7]\n---\nL^{7}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}*2;];")
    assert candidates(prime, "loop_split") == []
    with pytest.raises(InvalidParamsError, match="factor=5 is not legal"):
        apply_strategy(program, "loop_split", 0, {"factor": 5})


def test_trace_names_the_loop_and_the_new_nest():
    program = workload("level1/layer_norm")
    serial = next(i for i, s in enumerate(candidates(program, "loop_split")) if s.get("loop") != "tx")
    step = apply_strategy(program, "loop_split", serial, {"factor": 4})
    old = [lp for lp in step.before.body.blocks[step.site.path[0]].loops if lp.var == step.site.get("loop")][0]
    assert loop_text(old) in step.trace.applicability
    again = apply_strategy(workload("level1/layer_norm"), "loop_split", serial, {"factor": 4})
    assert canonical(again.after.body) == canonical(step.after.body)
    assert again.trace.render() == step.trace.render()


def test_splits_a_bound_loop_into_a_bound_outer_and_a_serial_inner_loop():
    """Coarsening: ``B^{64}_{tx}`` becomes ``B^{16}_{tx}L^{4}_{d}``, each thread running four rows, and the
    step verifies on the CPU (where ``tx`` is serial) and lowers for cuda with 16 threads."""
    from verifier.lowering import to_tvmscript

    program = workload("level1/matmul")
    step = apply_strategy(program, "loop_split", Site((0,), (("loop", "tx"),)), {"factor": 4})
    outer, inner = step.after.body.blocks[0].loops[:2]
    assert (outer.kind, outer.extent, outer.var) == ("B", 16, "tx")
    assert (inner.kind, inner.extent) == ("L", 4)
    assert f"tx*4+{inner.var}" in canonical(step.after.body)
    assert "bound loop" in step.trace.applicability and "register tile" in step.trace.rationale
    check_step(step)
    assert "threadIdx.x" in to_tvmscript(step.after, "cuda") and "16" in to_tvmscript(step.after, "cuda")


def test_refuses_a_bound_loop_with_a_bound_loop_inside():
    program = leir("input A: f32[8, 6]\noutput C: f32[8, 6]\n---\n"
                   "B^{8}_{bx=0}B^{6}_{tx=0}[C^{f32,g}_{bx,tx}=A^{f32,g}_{bx,tx}*2;];")
    assert [s.get("loop") for s in candidates(program, "loop_split")] == ["tx"]
    reason = refusal_reason(program, "loop_split", Site((0,), (("loop", "bx"),)), {"factor": 2})
    assert "has a bound loop inside it" in reason
