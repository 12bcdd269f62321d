"""set_storage_layout: every subscript of an intermediate rewritten through one layout map, no copy."""

from __future__ import annotations

import pytest

from leir.analysis import program_info
from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates

from .cuda_checks import assert_builds_for_cuda
from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

NAME = "set_storage_layout"


def _site(program, tensor):
    for index, site in enumerate(candidates(program, NAME)):
        if site.get("tensor") == tensor:
            return index, site
    raise AssertionError(f"no site for {tensor}")


@pytest.mark.parametrize(("workload_id", "tensor", "layout", "fragment", "shape"), [
    ("level1/layer_norm", "J", "fuse:1", "J^{f32,g}_{tx,a*64+c}", (4, 1024)),
    ("level1/layer_norm", "J", "transpose:0,2", "J^{f32,g}_{c,a,tx}", (64, 16, 4)),
    ("level2/conv2d_groupnorm_silu", "F", "flatten", "F^{f32,g}_{((tx*4+f)*18+(c+g))*18+(d+h)}", (2592,)),
    ("level2/conv2d_groupnorm_silu", "J", "split:1:2", "J^{f32,g}_{tx,a//2,a%2}", (2, 2, 2)),
    ("level1/layer_norm", "J", "pack:2:16", "J^{f32,g}_{c//16,tx,a,c%16}", (4, 4, 16, 16)),
    ("level1/softmax", "D", "split:0:2", None, None),
])
def test_relayouts_an_intermediate_of_a_workload(workload_id, tensor, layout, fragment, shape):
    program = workload(workload_id)
    index, site = _site(program, tensor)
    assert layout in site.params[0].values
    step = apply_strategy(program, NAME, index, {"layout": layout})
    if fragment is not None:
        assert fragment in canonical(step.after.body)
        assert program_info(step.after).tensors[tensor].shape == shape
    assert step.after.signature == program.signature and len(step.after.body.blocks) == len(program.body.blocks)
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)
    assert_builds_for_cuda(step)


def test_an_on_chip_intermediate_keeps_only_layouts_the_cuda_lowering_accepts():
    program = workload("level1/matmul")
    index = next(i for i, s in enumerate(candidates(program, "cache_read_write"))
                 if s.get("direction") == "read" and s.get("tensor") == "A" and s.get("at") == 1)
    staged = apply_strategy(program, "cache_read_write", index, {"scope": "s"}).after  # E^{s}_{tx,d}
    _, site = _site(staged, "E")
    # fusing tx into the flat index, splitting it, or moving it leaves tx out of one fixed dimension
    # (or the first write no longer covers the buffer) -- only the transpose keeps both rules
    assert site.params[0].values == ("transpose:0,1",)
    step = apply_strategy(staged, NAME, _site(staged, "E")[0], {"layout": "transpose:0,1"})
    assert "E^{f32,s}_{d,tx}" in canonical(step.after.body)
    assert_builds_for_cuda(step)


def test_refuses_a_known_tensor():
    program = workload("level1/matmul")
    assert not candidates(program, NAME)  # only A, C, D: all known
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0,), (("tensor", "D"),)), {"layout": "transpose:0,1"})


def test_refuses_an_intermediate_read_outside_its_extent():
    # a prefix recurrence reads D_{tx,a-1} under a guard: index -1 is outside D, so // and % would wrap
    program = leir("input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
                   "B^{4}_{tx=0}L^{8}_{a=0}[D^{f32,g}_{tx,a}=if_then_else(a-1<0,0,D^{f32,g}_{tx,a-1})+"
                   "A^{f32,g}_{tx,a};];B^{4}_{tx=0}L^{8}_{a=0}[C^{f32,g}_{tx,a}=D^{f32,g}_{tx,a};];")
    assert not candidates(program, NAME)
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0,), (("tensor", "D"),)), {"layout": "split:1:2"})
