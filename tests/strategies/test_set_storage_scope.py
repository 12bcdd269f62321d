"""set_storage_scope: an intermediate moves to s/l (or back to g) where the cuda lowering supports it."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates

from .cuda_checks import assert_builds_for_cuda
from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

NAME = "set_storage_scope"


def _staged(workload_id, tensor, at=1):
    """A real state with a one-block intermediate: the workload after a shared read cache of ``tensor``."""
    program = workload(workload_id)
    for index, site in enumerate(candidates(program, "cache_read_write")):
        if site.get("direction") == "read" and site.get("tensor") == tensor and site.get("at") == at:
            return apply_strategy(program, "cache_read_write", index, {"scope": "s"}).after
    raise AssertionError(f"no read cache of {tensor}")


def _site(program, tensor):
    for index, site in enumerate(candidates(program, NAME)):
        if site.get("tensor") == tensor:
            return index, site
    raise AssertionError(f"no site for {tensor}")


@pytest.mark.parametrize(("workload_id", "tensor", "scope"), [
    ("level1/matmul", "A", "l"),
    ("level1/conv2d", "A", "g"),
    ("level1/layer_norm", "D", "l"),
])
def test_moves_a_staged_buffer_of_a_workload(workload_id, tensor, scope):
    program = _staged(workload_id, tensor)
    index, site = next((i, s) for i, s in enumerate(candidates(program, NAME)) if "(s)" in s.where)
    step = apply_strategy(program, NAME, index, {"scope": scope})
    name = site.get("tensor")
    assert f"{name}^{{f32,s}}" not in canonical(step.after.body)
    assert f"{name}^{{f32,{scope}}}" in canonical(step.after.body)
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)
    assert_builds_for_cuda(step)


FUSED = ("input A: f32[4, 16]\noutput C: f32[4, 16]\n---\n"
         "B^{4}_{tx=0}L^{16}_{a=0}[F^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});C^{f32,g}_{tx,a}=F^{f32,g}_{tx,a}*2;];")
REDUCED = ("input A: f32[8, 32]\noutput C: f32[8, 32]\n---\n"
           "B^{8}_{bx=0}[L^{32}_{a=0}[F^{f32,g}_{bx}=F^{f32,g}_{bx}+A^{f32,g}_{bx,a};];"
           "L^{32}_{a=0}[C^{f32,g}_{bx,a}=A^{f32,g}_{bx,a}/F^{f32,g}_{bx};];];")


@pytest.mark.parametrize(("text", "tensor", "scope"), [(FUSED, "F", "l"), (FUSED, "F", "s"),
                                                       (REDUCED, "F", "s"), (REDUCED, "F", "l")])
def test_moves_a_global_intermediate_on_chip(text, tensor, scope):
    program = leir(text)
    index, site = _site(program, tensor)
    assert site.params[0].values == ("s", "l")
    step = apply_strategy(program, NAME, index, {"scope": scope})
    assert f"{tensor}^{{f32,{scope}}}" in canonical(step.after.body)
    assert_interpreter_agrees(step)
    assert_verifies(step)
    assert_builds_for_cuda(step)


def _refuses(program, tensor, scope="l"):
    assert not any(s.get("tensor") == tensor for s in candidates(program, NAME))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0,), (("tensor", tensor),)), {"scope": scope})


def test_refuses_to_make_a_thread_private_buffer_global():
    program = workload("level1/matmul")
    index = next(i for i, s in enumerate(candidates(program, "cache_read_write"))
                 if s.get("direction") == "read" and s.get("tensor") == "A" and s.get("at") == 1)
    staged = apply_strategy(program, "cache_read_write", index, {"scope": "l"}).after  # E_{d}, no tx
    assert not any(s.get("tensor") == "E" for s in candidates(staged, NAME))  # neither s nor g
    with pytest.raises(NotApplicableError, match="indexed by tx"):
        _apply_raw(staged, "E", "g")


def test_refuses_a_bound_loop_that_does_not_lead_its_block():
    # the kernel starts inside the host loop over a; the on-chip allocation sits at the kernel's top
    _refuses(leir("input A: f32[4, 16]\noutput C: f32[4, 16]\n---\n"
                  "L^{4}_{a=0}B^{16}_{tx=0}[F^{f32,g}_{a,tx}=A^{f32,g}_{a,tx};C^{f32,g}_{a,tx}=F^{f32,g}_{a,tx};];"),
             "F")


def test_refuses_an_intermediate_used_by_two_kernels():
    _refuses(workload("level1/layer_norm"), "F")  # F is reduced in block 1 and read in block 2


def test_refuses_a_tensor_whose_first_write_does_not_cover_it():
    _refuses(leir("input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
                  "B^{4}_{tx=0}L^{8}_{a=0}[F^{f32,g}_{tx,a*2}=A^{f32,g}_{tx,a};"
                  "C^{f32,g}_{tx,a}=F^{f32,g}_{tx,a*2};];"), "F")



def test_refuses_a_tensor_a_bound_loop_does_not_index():
    # every thread would own a copy of F, yet F is meant as one tensor shared across tx
    _refuses(leir("input A: f32[4, 16]\noutput C: f32[4, 16]\n---\n"
                  "B^{4}_{tx=0}L^{16}_{a=0}[F^{f32,g}_{a}=A^{f32,g}_{tx,a};C^{f32,g}_{tx,a}=F^{f32,g}_{a};];"),
             "F")


def test_refuses_shared_memory_beyond_the_block_limit():
    program = leir("input A: f32[2, 128, 128]\noutput C: f32[2, 128, 128]\n---\n"
                   "B^{2}_{bx=0}L^{128}_{a=0}L^{128}_{c=0}[F^{f32,g}_{bx,a,c}=A^{f32,g}_{bx,a,c};"
                   "C^{f32,g}_{bx,a,c}=F^{f32,g}_{bx,a,c};];")
    _, site = _site(program, "F")
    assert site.params[0].values == ("l",)  # 2*128*128*4 = 128 KB of shared memory: over 48 KB
    with pytest.raises(NotApplicableError, match="bytes per block"):
        _apply_raw(program, "F", "s")


def _apply_raw(program, tensor, scope):
    from strategies import get_strategy

    strategy = get_strategy(NAME)
    strategy.apply(program, Site((0,), (("tensor", tensor),)), {"scope": scope})
