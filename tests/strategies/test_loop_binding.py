"""loop_binding: spatial loops bound to GPU axes within the CUDA limits (the lowering's own check)."""

from __future__ import annotations

import pytest

from leir.gpu_limits import gpu_limit_violations
from leir.printer import canonical
from strategies import InvalidParamsError, Site, apply_strategy, candidates
from strategies.loop.loop_binding import LoopBinding

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/conv2d", "level2/conv2d_groupnorm_silu"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_binds_a_spatial_loop_of_a_workload_and_the_kernel_honours_it(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "loop_binding")
    assert sites
    site = sites[-1]
    axis = site.params[0].values[-1]
    step = apply_strategy(program, "loop_binding", site, {"axis": axis})
    assert "B^{" in canonical(step.after.body) and f"_{{{axis}" in canonical(step.after.body)
    block = step.after.body.blocks[site.path[0]]
    assert gpu_limit_violations(block, {}) == []
    check_step(step, honoured=True)


def test_a_block_axis_binding_runs_in_parallel_on_the_cpu():
    program = leir("input A: f32[8, 16]\noutput C: f32[8, 16]\n---\n"
                   "L^{8}_{i=0}L^{16}_{a=0}[C^{f32,g}_{i,a}=exp(A^{f32,g}_{i,a});];")
    site = Site((0,), (("loop", "i"),))
    assert candidates(program, "loop_binding")[0].params[0].values == ("bx", "by", "bz", "tx", "ty", "tz")
    step = apply_strategy(program, "loop_binding", site, {"axis": "bx"})
    assert canonical(step.after.body).startswith("B^{8}_{bx=0}L^{16}_{a=0}[C^{f32,g}_{bx,a}")
    check_step(step, honoured=True)
    from verifier.lowering import lower

    assert "T.parallel(8)" in lower(step.after).source


def test_refuses_2048_threads_a_reduction_axis_and_a_block_axis_inside_threads():
    # B^{64}_{tx} already: a further 32 threads on y or z would make 2048 per block
    program = leir("input A: f32[64, 32]\noutput C: f32[64, 32]\n---\n"
                   "B^{64}_{tx=0}L^{32}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a};];")
    site = Site((0,), (("loop", "a"),))
    # only the rebinding of tx itself to a block axis is left (tested below)
    assert [(c.path, c.detail) for c in candidates(program, "loop_binding")] == [((0,), (("loop", "tx"),))]
    assert "2048 threads per block" in refusal_reason(program, "loop_binding", site, {"axis": "ty"})
    assert "blockIdx axis cannot sit inside" in refusal_reason(program, "loop_binding", site, {"axis": "bx"})
    # the cuda lowering refuses the very program the strategy declined to make, with the same words
    from verifier.lowering import GpuLimitError, lower

    forced = LoopBinding()._bound(program, (0,), program.body.blocks[0].loops[1], "ty")
    with pytest.raises(GpuLimitError, match="make 2048 threads per block"):
        lower(forced, "cuda")
    matmul = workload("level1/matmul")
    reduction = Site((0,), (("loop", "c"),))
    assert_refused(matmul, "loop_binding", reduction)
    assert "carries a reduction" in refusal_reason(matmul, "loop_binding", reduction, {"axis": "ty"})
    big = leir("input A: f32[2048]\noutput C: f32[2048]\n---\nL^{2048}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];")
    assert candidates(big, "loop_binding")[0].params[0].values == ("bx", "by", "bz")
    with pytest.raises(InvalidParamsError):
        apply_strategy(big, "loop_binding", 0, {"axis": "tx"})


def test_a_thread_axis_loop_rebinds_to_a_block_axis_and_then_runs_in_parallel_on_the_cpu():
    """The frontend binds every outer loop to tx, which the CPU runs serially; bx runs it in parallel."""
    program = leir("input A: f32[64, 32]\ninput D: f32[32]\noutput C: f32[64]\n---\n"
                   "B^{64}_{tx=0}L^{32}_{c=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,c}*D^{f32,g}_{c};];")
    from verifier.lowering import lower

    assert "T.parallel" not in lower(program).source
    [site] = candidates(program, "loop_binding")
    assert site.detail == (("loop", "tx"),) and site.params[0].values == ("bx", "by", "bz")
    step = apply_strategy(program, "loop_binding", site, {"axis": "bx"})
    assert canonical(step.after.body) == ("B^{64}_{bx=0}L^{32}_{c=0}[C^{f32,g}_{bx}=C^{f32,g}_{bx}+"
                                          "A^{f32,g}_{bx,c}*D^{f32,g}_{c};];")
    assert "threadIdx loops serially and blockIdx loops in parallel" in step.trace.rationale
    check_step(step, honoured=True)
    assert "T.parallel(64)" in lower(step.after).source
    # a thread axis stays a thread axis only by staying put; a block axis is not rebound again
    assert "rebinds to a block axis" in refusal_reason(program, "loop_binding", site, {"axis": "ty"})
    assert candidates(step.after, "loop_binding") == []
    # iterations that depend on each other stay bound to threads (here tx reads its neighbour's output)
    chained = leir("input A: f32[64]\noutput C: f32[64]\n---\n"
                   "B^{64}_{tx=0}[C^{f32,g}_{tx}=if_then_else(tx>0,C^{f32,g}_{tx-1},0)+A^{f32,g}_{tx};];")
    assert candidates(chained, "loop_binding") == []
    assert "carries a recurrence" in refusal_reason(chained, "loop_binding", Site((0,), (("loop", "tx"),)),
                                                    {"axis": "bx"})
