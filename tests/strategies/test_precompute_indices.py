"""precompute_indices: a compound subscript becomes an i64 table lookup."""

from __future__ import annotations

import pytest

from leir.analysis import program_info
from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .cuda_checks import assert_builds_for_cuda
from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload

NAME = "precompute_indices"


def _site(program, path, index_text):
    for index, site in enumerate(candidates(program, NAME)):
        if site.path == path and site.get("index") == index_text:
            return index
    raise AssertionError(f"no site for {index_text} at {path}")


@pytest.mark.parametrize(("workload_id", "path", "index_text", "table_shape"), [
    ("level2/conv2d_groupnorm_silu", (3, 0), "a*2+c", (4, 2)),
    ("level1/conv2d", (0, 0), "c+g", (14, 3)),
    ("level1/conv2d", (0, 0), "d+h", (10, 3)),
    ("level1/avg_pool2d", None, None, None),
])
def test_tabulates_a_compound_subscript_of_a_workload(workload_id, path, index_text, table_shape):
    program = workload(workload_id)
    if path is None:  # the first site the workload offers (a pooling window: c*2+f style)
        index = 0
        site = candidates(program, NAME)[0]
        path, index_text = site.path, site.get("index")
    else:
        index = _site(program, path, index_text)
    step = apply_strategy(program, NAME, index)
    table = step.after.body.blocks[path[0]].items[0]
    assert table.target.dtype == "i64" and canonical(table.value) == index_text
    if table_shape is not None:
        assert program_info(step.after).tensors[table.target.name].shape == table_shape
    consumer = canonical(step.after.body.blocks[path[0] + 1])
    assert canonical(table.target) in consumer
    assert step.exactness.value == "E"
    assert_interpreter_agrees(step)
    assert_verifies(step)
    assert_builds_for_cuda(step)


def test_every_occurrence_in_the_statement_goes_through_the_table():
    program = workload("level2/conv2d_groupnorm_silu")  # the variance reads C_{tx,a*2+c,d,f} twice
    index = _site(program, (5, 0), "a*2+c")
    step = apply_strategy(program, NAME, index)
    consumer = canonical(step.after.body.blocks[6])
    assert "a*2+c" not in consumer and consumer.count("R^{i64,g}_{a,c}") == 2
    assert "2 occurrence(s)" in step.trace.applicability


def test_refuses_a_plain_variable_and_a_target_subscript():
    program = workload("level2/conv2d_groupnorm_silu")
    texts = {(s.path, s.get("index")) for s in candidates(program, NAME)}
    assert ((0, 0), "tx") not in texts and ((0, 0), "c-1") not in texts  # no arithmetic worth a table
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0, 0), (("index", "tx"),)))
    # a target keeps its subscript: only the read is tabulated
    norm = leir("input A: f32[4, 8]\noutput O: f32[8, 4]\n---\n"
                "B^{4}_{tx=0}L^{2}_{a=0}L^{4}_{c=0}[O^{f32,g}_{a*4+c,tx}=A^{f32,g}_{tx,a*4+c};];")
    assert [s.get("index") for s in candidates(norm, NAME)] == ["a*4+c"]  # the read, not the write
    step = apply_strategy(norm, NAME, 0)
    assert "O^{f32,g}_{a*4+c,tx}" in canonical(step.after.body)
    assert_verifies(step)


def test_refuses_a_table_too_large():
    program = leir("input A: f32[300, 300]\noutput C: f32[300, 300]\n---\n"
                   "B^{300}_{tx=0}L^{300}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{(tx+a)%300,a};];")
    assert not candidates(program, NAME)  # 90000 entries > 65536
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0, 0), (("index", "(tx+a)%300"),)))


def test_refuses_a_subscript_that_alone_sets_an_intermediates_extent():
    """Zero padding read back: ``F`` is written at odd positions 1..7 and read at ``a+c`` up to 9, so its
    extent (10) exists only because of that read; through a table it would shrink to 8 and the read would
    leave the tensor. The same subscript on an input (whose shape the signature fixes) stays a site."""
    padded = leir("input A: f32[4]\noutput C: f32[8]\n---\n"
                  "L^{4}_{a=0}[F^{f32,g}_{a*2+1}=A^{f32,g}_{a};];"
                  "B^{8}_{a=0}L^{3}_{c=0}[C^{f32,g}_{a}=C^{f32,g}_{a}+F^{f32,g}_{a+c};];")
    assert program_info(padded).tensors["F"].shape == (10,)
    assert not [s for s in candidates(padded, NAME) if s.get("index") == "a+c"]
    with pytest.raises(NotApplicableError):
        apply_strategy(padded, NAME, Site((1, 0), (("index", "a+c"),)))
    with pytest.raises(NotApplicableError, match="only because of the subscript a\\+c"):
        get_strategy(NAME).apply(padded, Site((1, 0), (("index", "a+c"),)), {})
    on_input = leir("input A: f32[10]\noutput C: f32[8]\n---\n"
                    "B^{8}_{a=0}L^{3}_{c=0}[C^{f32,g}_{a}=C^{f32,g}_{a}+A^{f32,g}_{a+c};];")
    step = apply_strategy(on_input, NAME, 0)
    assert_verifies(step)
