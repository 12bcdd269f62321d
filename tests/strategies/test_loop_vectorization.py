"""loop_vectorization: innermost contiguous spatial loops become V; strided or carried loops are refused."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/softmax", "level2/conv2d_groupnorm_silu"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_vectorizes_the_inner_half_of_a_split_innermost_loop(workload_id):
    program = workload(workload_id)
    for index, site in enumerate(candidates(program, "loop_split")):
        split = apply_strategy(program, "loop_split", index, {"factor": site.params[0].values[0]})
        lanes = candidates(split.after, "loop_vectorization")
        if lanes:
            break
    assert lanes, f"no split of {workload_id} gives a vectorisable innermost loop"
    step = apply_strategy(split.after, "loop_vectorization", lanes[-1])
    assert "V^{" in canonical(step.after.body)
    check_step(step, honoured=True)


def test_vectorizes_a_short_contiguous_loop_directly():
    program = workload("level1/conv2d")
    sites = candidates(program, "loop_vectorization")
    assert sites
    check_step(apply_strategy(program, "loop_vectorization", 0), honoured=True)


@pytest.mark.parametrize("sig, body, reason", [
    ("A: f32[4, 16]\noutput C: f32[4, 8]", "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a*2};];",
     "stride 2 along a"),
    ("A: f32[8, 7]\noutput C: f32[4, 8]", "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{a,i*2};];",
     "in subscript 1 of 2, not the last"),
    ("A: f32[4, 4]\noutput C: f32[4, 8]", "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a//2};];",
     "non-affine subscript"),
    ("A: f32[4, 8]\noutput C: f32[4, 1]",
     "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,0}=C^{f32,g}_{i,0}+A^{f32,g}_{i,a};];", "carries a reduction"),
    ("A: f32[4, 32]\noutput C: f32[4, 32]", "L^{4}_{i=0}L^{32}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a};];",
     "outside 2..16"),
    ("A: f32[4, 8]\noutput C: f32[4, 8]", "L^{4}_{a=0}L^{8}_{i=0}[C^{f32,g}_{a,i}=A^{f32,g}_{a,i};];", None),
])
def test_refuses_strided_gathered_carried_and_long_innermost_loops(sig, body, reason):
    program = leir(f"input {sig}\n---\n{body}")
    if reason is None:  # the control case: the same shape of loop, contiguous, is a site
        assert [s.get("loop") for s in candidates(program, "loop_vectorization")] == ["i"]
        return
    site = Site((0,), (("loop", "a"),))
    assert_refused(program, "loop_vectorization", site)
    assert reason in refusal_reason(program, "loop_vectorization", site)


def test_vectorizes_a_loop_over_unrolled_rows_only():
    """``V^{16}_{f}U^{4}_{d}``: TVM unrolls the rows into copies inside each vector operation (the
    register tile of a matrix product); a serial loop after it still keeps it out."""
    sig = "input A: f32[8, 32]\ninput B: f32[32, 32]\noutput C: f32[8, 32]\n---\n"
    body = ("B^{2}_{bx=0}L^{2}_{e=0}L^{32}_{c=0}L^{16}_{f=0}{KIND}^{4}_{d=0}[C^{f32,g}_{bx*4+d,e*16+f}="
            "C^{f32,g}_{bx*4+d,e*16+f}+A^{f32,g}_{bx*4+d,c}*B^{f32,g}_{c,e*16+f};];")
    program = leir(sig + body.replace("{KIND}", "U"))
    assert [s.get("loop") for s in candidates(program, "loop_vectorization")] == ["f"]
    step = apply_strategy(program, "loop_vectorization", 0)
    assert "V^{16}_{f=0}U^{4}_{d=0}" in canonical(step.after.body)
    check_step(step, honoured=True)
    serial = leir(sig + body.replace("{KIND}", "L"))
    site = Site((0,), (("loop", "f"),))
    assert_refused(serial, "loop_vectorization", site)
    assert "not the innermost loop" in refusal_reason(serial, "loop_vectorization", site)
