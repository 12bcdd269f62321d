"""loop_parallelization: spatial loops become P, and the built kernel really runs them in parallel."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/matmul", "level1/softmax"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_every_parallelization_of_a_workload_is_honoured(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "loop_parallelization")
    assert sites
    for index in sorted({0, len(sites) - 1}):
        step = apply_strategy(program, "loop_parallelization", index)
        assert "P^{" in canonical(step.after.body)
        check_step(step, honoured=True)


def test_the_partials_of_a_factored_reduction_can_run_in_parallel():
    program = workload("level1/softmax")
    factored = apply_strategy(program, "reduction_factorization", 0, {"factor": 4}).after
    lanes = [s for s in candidates(factored, "loop_parallelization") if s.path == (0,)]
    assert lanes, "the lane loop of the partial reduction should be spatial"
    check_step(apply_strategy(factored, "loop_parallelization", lanes[0]), honoured=True)


def test_refuses_reduction_recurrence_and_nested_parallel_loops():
    matmul = workload("level1/matmul")
    site = Site((0,), (("loop", "c"),))
    assert_refused(matmul, "loop_parallelization", site)
    assert "carries a reduction" in refusal_reason(matmul, "loop_parallelization", site)
    cumsum = workload("level1/cumsum")
    assert candidates(cumsum, "loop_parallelization") == []
    assert "carries a recurrence" in refusal_reason(cumsum, "loop_parallelization", Site((0,), (("loop", "a"),)))
    nested = leir("input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
                  "P^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}*2;];")
    assert candidates(nested, "loop_parallelization") == []
    assert "already runs in parallel" in refusal_reason(nested, "loop_parallelization", Site((0,), (("loop", "a"),)))
    # two statements: the second reads what another iteration of the first writes
    shifted = leir("input A: f32[9]\noutput C: f32[8]\n---\n"
                   "L^{8}_{i=0}[X^{f32,g}_{i+1}=A^{f32,g}_{i};C^{f32,g}_{i}=X^{f32,g}_{i}+1;];")
    assert candidates(shifted, "loop_parallelization") == []


SCAN = ("input A: f32[6, 64, 8]\noutput C: f32[6, 64, 8]\n---\n"
        "L^{6}_{b=0}L^{64}_{t=0}L^{8}_{d=0}["
        "C^{f32,g}_{b,t,d}=if_then_else(t-1<0,0,C^{f32,g}_{b,t-1,d})+A^{f32,g}_{b,t,d};];")


def test_the_batch_and_lane_loops_of_a_scan_run_in_parallel_and_the_scan_loop_does_not():
    # Every access of C subscripts a dimension with b itself (and one with d): iteration b = v reads and
    # writes slice v only, so the recurrence along t carries nothing between batches or lanes.
    program = leir(SCAN)
    loops = {s.get("loop") for s in candidates(program, "loop_parallelization")}
    assert loops == {"b", "d"}
    assert "carries a recurrence" in refusal_reason(program, "loop_parallelization", Site((0,), (("loop", "t"),)))
    for site in candidates(program, "loop_parallelization"):
        check_step(apply_strategy(program, "loop_parallelization", site), honoured=True)


def test_a_loop_that_does_not_slice_every_access_still_carries_the_dependence():
    # C_{b+1,...} is written from C_{b,...}: no dimension is subscripted by b alone in both accesses.
    shifted = leir("input A: f32[7, 8]\noutput C: f32[7, 8]\n---\n"
                   "L^{6}_{b=0}L^{8}_{d=0}[C^{f32,g}_{b+1,d}=C^{f32,g}_{b,d}+A^{f32,g}_{b,d};];")
    loops = {s.get("loop") for s in candidates(shifted, "loop_parallelization")}
    assert loops == {"d"}
