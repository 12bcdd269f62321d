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


def _tiling_step(program, outer_tile, inner_tile):
    site = candidates(program, "loop_tiling")[0]
    return apply_strategy(program, "loop_tiling", site, {"outer_tile": outer_tile, "inner_tile": inner_tile})


def test_the_footprint_counts_the_tile_not_the_loops_full_extents():
    """8 x 4 of a 64 x 64 copy-plus-transpose: C and A are read over 32 elements each (A twice, as rows
    and as columns: 32 distinct elements per access), 256 bytes in all — not the 32,800 bytes of the
    whole range that the loops' full extents gave for every tile size."""
    from strategies.loop.loop_tiling import _tile_bytes

    program = leir("input A: f32[64, 64]\noutput C: f32[64, 64]\n---\n"
                   "L^{64}_{i=0}L^{64}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{i,j}+A^{f32,g}_{j,i};];")
    block = program.body.blocks[0]
    assert _tile_bytes(program, block, {"i": 8, "j": 4}, ()) == 32 * 4 + 32 * 4
    assert _tile_bytes(program, block, {"i": 1, "j": 1}, ()) == 4 + 4
    step = _tiling_step(program, 8, 4)
    assert "about 256 bytes" in step.trace.rationale and "stays in cache" in step.trace.rationale


def test_the_cache_claim_follows_the_footprint_against_the_targets_l1():
    """2 x 2 tiles over rows of 4096 floats touch 2 x 2 x 4096 x 4 bytes per tensor (128 KiB in all):
    more than the 32 KiB L1 of the llvm target, and the trace says so instead of "stays in cache"."""
    program = leir("input A: f32[4, 4, 4096]\noutput C: f32[4, 4, 4096]\n---\n"
                   "L^{4}_{i=0}L^{4}_{j=0}L^{4096}_{k=0}[C^{f32,g}_{i,j,k}=A^{f32,g}_{i,j,k}*2;];")
    step = _tiling_step(program, 2, 2)
    rationale = step.trace.rationale
    assert f"about {2 * 2 * 4096 * 4 * 2} bytes" in rationale
    assert "does not stay in L1" in rationale and "stays in cache" not in rationale
    check_step(step)
