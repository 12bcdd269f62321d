"""loop_fusion: adjacent loops merge; after loop_split it gives the original program back."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/conv2d", "level1/softmax"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_fusion_after_split_gives_back_the_original_program(workload_id):
    program = workload(workload_id)
    for index, site in enumerate(candidates(program, "loop_split")):
        split = apply_strategy(program, "loop_split", index, {"factor": site.params[0].values[0]})
        block = split.after.body.blocks[site.path[0]] if len(site.path) == 1 else None
        outer = site.get("loop")
        loops = [lp.var for lp in block.loops]
        inner = loops[loops.index(outer) + 1]
        fused = apply_strategy(split.after, "loop_fusion", Site(site.path, (("inner", inner), ("outer", outer))))
        assert canonical(fused.after.body) == canonical(program.body), (workload_id, site.key)
    check_step(fused)


def test_fuses_loops_never_split_with_floordiv_and_mod():
    program = workload("level1/layer_norm")  # L^{16}_{a}L^{64}_{c}: a reduction over both, then elementwise
    sites = candidates(program, "loop_fusion")
    assert sites
    step = apply_strategy(program, "loop_fusion", 0)
    text = canonical(step.after.body)
    outer = step.site.get("outer")
    assert f"L^{{1024}}_{{{outer}=0}}" in text and f"{outer}//64" in text and f"{outer}%64" in text
    assert step.exactness.value == "E"
    check_step(step)
    last = apply_strategy(program, "loop_fusion", len(sites) - 1)
    check_step(last)


def test_refuses_to_fuse_a_reduction_axis_into_a_spatial_loop():
    program = workload("level1/matmul")  # L^{64}_{a} spatial, L^{64}_{c} the reduction axis
    site = Site((0,), (("inner", "c"), ("outer", "a")))
    assert_refused(program, "loop_fusion", site)
    assert "carries a dependence along c only" in refusal_reason(program, "loop_fusion", site)
    # B^{64}_{tx} takes in a serial loop only while the launch stays within CUDA's limits: 64 x 64
    # threads would be 4096 in one block
    bound = Site((0,), (("inner", "a"), ("outer", "tx")))
    assert "break a CUDA limit" in refusal_reason(program, "loop_fusion", bound)
    assert "1024" in refusal_reason(program, "loop_fusion", bound)
    vector = leir("input A: f32[8, 6]\noutput C: f32[8, 6]\n---\n"
                  "L^{8}_{a=0}V^{6}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];")
    assert "only serial L loops fuse" in refusal_reason(vector, "loop_fusion",
                                                        Site((0,), (("inner", "c"), ("outer", "a"))))
