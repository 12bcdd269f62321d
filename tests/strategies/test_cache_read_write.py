"""cache_read_write: a global tensor's region staged in a fresh s/l buffer (read) or computed there (write)."""

from __future__ import annotations

import pytest

from leir.analysis import program_info
from leir.printer import canonical
from strategies import InvalidParamsError, NotApplicableError, Site, apply_strategy, candidates

from .cuda_checks import assert_builds_for_cuda
from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

NAME = "cache_read_write"


def _site(program, direction, tensor, block=None, at=1):
    for index, site in enumerate(candidates(program, NAME)):
        if site.get("direction") == direction and site.get("tensor") == tensor and site.get("at") == at and (
                block is None or site.path[0] == block):
            return index, site
    raise AssertionError(f"no {direction} site for {tensor} at depth {at}")


def _depths(program, direction, tensor):
    return [s.get("at") for s in candidates(program, NAME)
            if s.get("direction") == direction and s.get("tensor") == tensor]


def _check(step):
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)
    assert_builds_for_cuda(step)


@pytest.mark.parametrize(("workload_id", "tensor", "block", "scope", "at"), [
    ("level1/matmul", "A", 0, "l", 1),
    ("level1/matmul", "C", 0, "s", 2),
    ("level1/conv2d", "A", 0, "l", 1),
    ("level1/layer_norm", "D", 5, "s", 1),
    ("level2/conv2d_groupnorm_silu", "D", 1, "l", 2),
])
def test_read_cache_of_a_workload_verifies(workload_id, tensor, block, scope, at):
    program = workload(workload_id)
    index, site = _site(program, "read", tensor, block, at)
    step = apply_strategy(program, NAME, index, {"scope": scope})
    text = canonical(step.after.body)
    buffer = step.trace.change.split("buffer ")[1].split(" ")[0]
    assert f"{buffer}^{{f32,{scope}}}" in text
    assert tensor + "^{f32,g}" in text  # the copy still reads the original
    assert "bytes" in step.trace.change and "accesses per element" in step.trace.rationale
    _check(step)


@pytest.mark.parametrize(("workload_id", "tensor", "block", "scope"), [
    ("level1/matmul", "D", 0, "l"),
    ("level1/conv2d", "C", 0, "s"),
    ("level1/layer_norm", "J", 4, "l"),
])
def test_write_cache_of_a_workload_verifies(workload_id, tensor, block, scope):
    program = workload(workload_id)
    index, site = _site(program, "write", tensor, block)
    step = apply_strategy(program, NAME, index, {"scope": scope})
    assert f"{tensor}^{{f32,g}}" in step.trace.change  # the copy back is quoted
    _check(step)


def test_a_write_cache_of_one_element_is_a_register_accumulator():
    program = workload("level1/matmul")
    index, _ = _site(program, "write", "D", at=2)
    step = apply_strategy(program, NAME, index, {"scope": "l"})
    assert ("L^{64}_{a=0}[E^{f32,l}_{tx}=0;L^{64}_{c=0}[E^{f32,l}_{tx}=E^{f32,l}_{tx}+"
            in canonical(step.after.body))
    assert "D^{f32,g}_{tx,a}=E^{f32,l}_{tx};" in canonical(step.after.body)
    _check(step)


TILED = ("input A: f32[12, 32]\ninput B: f32[32, 32]\noutput C: f32[12, 32]\n---\n"
         "B^{2}_{bx=0}L^{2}_{e=0}L^{32}_{c=0}U^{ROWS}_{d=0}V^{16}_{f=0}[C^{f32,g}_{bx*STEP+d,e*16+f}="
         "C^{f32,g}_{bx*STEP+d,e*16+f}+A^{f32,g}_{bx*STEP+d,c}*B^{f32,g}_{c,e*16+f};];")


def test_a_write_cache_of_a_register_tile_takes_strided_outer_loops():
    """The accumulator of a register tile: rows ``bx*6+d`` and columns ``e*16+f`` — each outer loop
    steps over whole regions, so every iteration owns its 6x16 tile."""
    program = leir(TILED.replace("ROWS", "6").replace("STEP", "6"))
    index, _ = _site(program, "write", "C", at=2)
    step = apply_strategy(program, NAME, index, {"scope": "l"})
    after = canonical(step.after.body)
    assert "L^{6}_{a=0}L^{16}_{g=0}[D^{f32,l}_{bx,a,g}=0;];" in after
    assert "C^{f32,g}_{bx*6+a,e*16+g}=D^{f32,l}_{bx,a,g};" in after
    _check(step)


def test_a_local_tile_is_limited_per_copy_and_a_shared_one_by_all_its_copies():
    """256 row blocks of a 6x16 accumulator: 384 bytes a copy, 98,304 bytes together. Each parallel
    iteration holds its own local copy (the lowering keeps it on the stack), so the local cache is within
    the 48 KB limit; a shared buffer holds every copy at once and is not."""
    program = leir(TILED.replace("ROWS", "6").replace("STEP", "6").replace("B^{2}_{bx=0}", "B^{256}_{bx=0}")
                   .replace("f32[12, 32]", "f32[1536, 32]"))
    index, site = _site(program, "write", "C", at=2)
    assert [spec.values for spec in site.params] == [("l",)]
    with pytest.raises(InvalidParamsError):
        apply_strategy(program, NAME, index, {"scope": "s"})
    step = apply_strategy(program, NAME, index, {"scope": "l"})
    assert program_info(step.after).tensors["D"].shape == (256, 6, 16)
    _check(step)


def test_refuses_a_write_cache_whose_outer_steps_overlap():
    # rows bx*3+d with d < 6: iterations bx=0 and bx=1 both write rows 3-5
    program = leir(TILED.replace("ROWS", "6").replace("STEP", "3").replace("f32[12, 32]", "f32[9, 32]"))
    assert _depths(program, "write", "C") == []
    _refused(program, Site((0, 0), (("at", 2), ("direction", "write"), ("tensor", "C"))))


def test_a_write_cache_keeps_the_other_statements_of_the_block():
    # the corpus's argmax: the block also zeroes the index tensor C, which must survive the rewrite
    program = leir("input A: f32[4, 8, 16]\noutput C: i64[4, 16]\n---\n"
                   "B^{4}_{tx=0}L^{8}_{a=0}L^{16}_{c=0}[D^{f32,g}_{tx,c}=max(D^{f32,g}_{tx,c},A^{f32,g}_{tx,a,c});"
                   "C^{i64,g}_{tx,c}=0;];B^{4}_{tx=0}L^{8}_{a=0}L^{16}_{c=0}[C^{i64,g}_{tx,c}="
                   "if_then_else(A^{f32,g}_{tx,a,c}>=D^{f32,g}_{tx,c},a,C^{i64,g}_{tx,c});];")
    for direction, tensor in (("write", "D"), ("write", "C")):
        index, _ = _site(program, direction, tensor, 0)
        step = apply_strategy(program, NAME, index, {"scope": "l"})
        assert canonical(step.after.body).count("C^{i64,g}_{tx,c}=0") == (1 if tensor == "D" else 0)
        _check(step)


def test_a_shared_buffer_gets_one_row_per_thread_and_a_local_one_does_not():
    program = workload("level1/matmul")
    index, _ = _site(program, "read", "A")
    shared = apply_strategy(program, NAME, index, {"scope": "s"})
    local = apply_strategy(program, NAME, index, {"scope": "l"})
    assert "E^{f32,s}_{tx,d}=A^{f32,g}_{tx,d}" in canonical(shared.after.body)
    assert "E^{f32,l}_{d}=A^{f32,g}_{tx,d}" in canonical(local.after.body)
    assert program_info(shared.after).tensors["E"].shape == (64, 64)
    assert program_info(local.after).tensors["E"].shape == (64,)


def _refused(program, site):
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, site)


def test_refuses_to_read_cache_a_tensor_the_block_writes():
    program = workload("level1/conv2d")
    sites = candidates(program, NAME)
    assert not any(s.get("direction") == "read" and s.get("tensor") == "C" for s in sites)
    _refused(program, Site((1, 0), (("at", 1), ("direction", "read"), ("tensor", "C"))))


def test_refuses_to_write_cache_an_accumulation_onto_earlier_values():
    program = workload("level1/conv2d")  # block 2 adds the bias onto the convolution's C
    assert not any(s.path[0] == 1 and s.get("direction") == "write" for s in candidates(program, NAME))
    _refused(program, Site((1, 0), (("at", 1), ("direction", "write"), ("tensor", "C"))))


def test_refuses_a_guarded_read_whose_region_leaves_the_tensor():
    program = workload("level2/conv2d_groupnorm_silu")  # F = if_then_else(..., A_{tx,a,c-1,d-1}, 0)
    assert not any(s.path == (0, 0) and s.get("tensor") == "A" for s in candidates(program, NAME))
    _refused(program, Site((0, 0), (("at", 1), ("direction", "read"), ("tensor", "A"))))


def test_refuses_a_split_that_would_put_a_bound_loop_inside_the_staging():
    program = leir("input A: f32[4, 64, 8]\noutput C: f32[4, 64, 8]\n---\n"
                   "B^{4}_{bx=0}B^{64}_{tx=0}L^{8}_{a=0}[C^{f32,g}_{bx,tx,a}=A^{f32,g}_{bx,tx,a}*2;];")
    assert _depths(program, "read", "A") == [2]
    _refused(program, Site((0, 0), (("at", 1), ("direction", "read"), ("tensor", "A"))))
    index, _ = _site(program, "read", "A", at=2)
    step = apply_strategy(program, NAME, index, {"scope": "l"})
    # a block-bound loop indexes the buffer (each block's copy is private; on the CPU it stays parallel)
    assert "D^{f32,l}_{bx,c}=A^{f32,g}_{bx,tx,c}" in canonical(step.after.body)
    _check(step)


def test_refuses_a_write_cache_that_would_restart_a_reduction():
    program = leir("input A: f32[16, 8, 4]\noutput D: f32[16, 4]\n---\n"
                   "B^{16}_{tx=0}L^{8}_{a=0}L^{4}_{c=0}[D^{f32,g}_{tx,c}=D^{f32,g}_{tx,c}+A^{f32,g}_{tx,a,c};];")
    assert _depths(program, "write", "D") == [1]  # at=2 would leave the reduce loop over a outside
    _refused(program, Site((0, 0), (("at", 2), ("direction", "write"), ("tensor", "D"))))
    index, _ = _site(program, "write", "D")
    _check(apply_strategy(program, NAME, index, {"scope": "l"}))


def test_refuses_a_region_larger_than_shared_memory():
    program = leir("input A: f32[2, 128, 128]\noutput C: f32[2]\n---\n"
                   "B^{2}_{tx=0}L^{128}_{a=0}L^{128}_{c=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a,c};];")
    # at=1 stages 128*128*4 = 64 KB per thread: over the 48 KB limit; at=2 stages one row
    assert _depths(program, "read", "A") == [2]
    _refused(program, Site((0, 0), (("at", 1), ("direction", "read"), ("tensor", "A"))))
    index, _ = _site(program, "read", "A", at=2)
    with pytest.raises(InvalidParamsError):  # with a thread's row per block, s needs 2*128*4 bytes: fine
        apply_strategy(program, NAME, index, {"scope": "g"})


def test_same_program_gives_the_same_step_byte_for_byte():
    first = apply_strategy(workload("level1/conv2d"), NAME, 0)
    again = apply_strategy(workload("level1/conv2d"), NAME, 0)
    assert canonical(first.after.body) == canonical(again.after.body)
    assert first.trace.render() == again.trace.render()


def test_refuses_a_block_that_reduces_across_threads():
    # sum_all reduces C over the thread-bound tx: TVM builds that cross-thread reduction only from one nest
    program = workload("level1/sum_all")
    assert not candidates(program, NAME)
    _refused(program, Site((0, 0), (("at", 1), ("direction", "read"), ("tensor", "A"))))
