"""layout_transformation: an input read through a copy in another layout (transpose, fuse, flatten, split,
pack)."""

from __future__ import annotations

import pytest

from leir.analysis import program_info
from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates

from .cuda_checks import assert_builds_for_cuda
from .helpers import assert_interpreter_agrees, assert_verifies, workload

NAME = "layout_transformation"


def _index(program, path, tensor):
    for index, site in enumerate(candidates(program, NAME)):
        if site.path == path and site.get("tensor") == tensor:
            return index, site
    raise AssertionError(f"no site for {tensor} at {path}")


@pytest.mark.parametrize(("workload_id", "path", "tensor", "layout", "new_shape"), [
    ("level1/matmul", (0, 0), "C", "transpose:0,1", (64, 64)),
    ("level1/layer_norm", (5, 0), "D", "fuse:0", (1024,)),
    ("level1/conv2d", (0, 0), "A", "flatten", (2 * 4 * 16 * 12,)),
    ("level1/conv2d", (0, 0), "D", "split:0:4", (2, 4, 4, 3, 3)),
    ("level1/matmul", (0, 0), "C", "pack:1:16", (4, 64, 16)),
])
def test_reads_a_workload_input_through_a_relaid_copy(workload_id, path, tensor, layout, new_shape):
    program = workload(workload_id)
    index, site = _index(program, path, tensor)
    assert layout in site.params[0].values
    step = apply_strategy(program, NAME, index, {"layout": layout})
    copy = step.after.body.blocks[path[0]].items[0]
    assert copy.value.name == tensor  # the new block copies the original ...
    assert program_info(step.after).tensors[copy.target.name].shape == new_shape  # ... into the new layout
    assert tensor not in {r.name for r in _reads(step.after.body.blocks[path[0] + 1])}
    assert "element(s) per iteration" in step.trace.rationale or "//" in step.trace.rationale
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)
    assert_builds_for_cuda(step)


def _reads(block):
    from leir.analysis import item_statements, stmt_reads

    return [r for _, stmt, _ in item_statements(block) for r in stmt_reads(stmt)]


def test_the_transpose_makes_the_matmul_read_contiguous():
    program = workload("level1/matmul")
    index, _ = _index(program, (0, 0), "C")
    step = apply_strategy(program, NAME, index, {"layout": "transpose:0,1"})
    assert "moves 64 element(s) per iteration before and 1 after" in step.trace.rationale
    assert "E^{f32,g}_{a,c}" in canonical(step.after.body)


def test_refuses_a_one_dimensional_tensor():
    program = workload("level1/conv2d")  # E is the bias, rank 1
    assert not any(s.get("tensor") == "E" for s in candidates(program, NAME))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((1, 0), (("tensor", "E"),)))


def test_refuses_a_guarded_read_that_leaves_the_tensor():
    program = workload("level2/conv2d_groupnorm_silu")  # A_{tx,a,c-1,d-1} under 1<=c<17&1<=d<17
    assert not any(s.path == (0, 0) and s.get("tensor") == "A" for s in candidates(program, NAME))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0, 0), (("tensor", "A"),)))


def test_refuses_an_output_and_an_intermediate():
    program = workload("level1/conv2d")  # block 2 reads the output C; layer_norm's J is an intermediate
    assert not any(s.get("tensor") == "C" for s in candidates(program, NAME))
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((1, 0), (("tensor", "C"),)))
    norm = workload("level1/layer_norm")
    assert not any(s.get("tensor") == "J" for s in candidates(norm, NAME))


@pytest.mark.parametrize(("tensor", "claim", "absent"), [
    ("C", "in exchange along the statement's innermost loop over c the read moves 64 element(s) per "
          "iteration before and 1 after", "worse"),
    ("A", "makes the read worse: along the statement's innermost loop over c the read moves 1 element(s) "
          "per iteration before and 64 after", "in exchange"),
])
def test_the_rationale_says_whether_the_new_stride_is_better_or_worse(tensor, claim, absent):
    """matmul reads C down a column (stride 64) and A along a row (stride 1): transposing C shortens
    its stride, transposing A lengthens it, and only the first may say it gains something "in exchange"."""
    program = workload("level1/matmul")
    index, _site = _index(program, (0, 0), tensor)
    rationale = apply_strategy(program, NAME, index, {"layout": "transpose:0,1"}).trace.rationale
    assert claim in rationale and absent not in rationale
