"""loop_tiling: two adjacent spatial loops become tiles; reduction loops are refused."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/conv2d", "level2/conv2d_groupnorm_silu"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_tiles_two_spatial_loops_of_a_workload_exactly(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "loop_tiling")
    assert sites, f"{workload_id} has no pair of spatial loops to tile"
    site = sites[-1]
    params = {"outer_tile": site.params[0].values[0], "inner_tile": site.params[1].values[-1]}
    step = apply_strategy(program, "loop_tiling", site, params)
    u, w = site.get("outer"), site.get("inner")
    text = canonical(step.after.body)
    assert f"{u}*{params['outer_tile']}+" in text and f"{w}*{params['inner_tile']}+" in text
    assert "bytes" in step.trace.rationale and step.exactness.value == "E"
    check_step(step)


def test_refuses_reduction_loops_and_non_adjacent_loops():
    program = workload("level1/matmul")  # L^{64}_{a} spatial, L^{64}_{c} the reduction
    site = Site((0,), (("inner", "c"), ("outer", "a")))
    assert_refused(program, "loop_tiling", site)
    reason = refusal_reason(program, "loop_tiling", site, {"outer_tile": 8, "inner_tile": 8})
    assert "carries a reduction" in reason
    prime = leir("input A: f32[4, 7]\noutput C: f32[4, 7]\n---\n"
                 "L^{4}_{i=0}L^{7}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{i,j};];")
    assert candidates(prime, "loop_tiling") == []
