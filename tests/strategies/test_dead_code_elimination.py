"""dead_code_elimination: blocks whose results nothing reads go, one per step; live ones refuse."""

from __future__ import annotations

from functools import cache

import pytest

from leir.analysis import dead_blocks
from leir.ast import Program
from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import REPO, assert_interpreter_agrees, assert_verifies, leir, workload

#: Workloads whose model computes something it never uses (the index half of max/min over a dim).
WORKLOADS = ["level1/max_dim", "level1/min_dim", "level2/gemm_max_subtract_gelu"]


@cache
def faithful(workload_id: str) -> Program:
    """The translation that keeps dead blocks (what the model computes, used or not)."""
    from frontend import translate_file

    return translate_file(REPO / "workloads" / f"{workload_id}.py", keep_dead_blocks=True).program


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_removes_a_dead_block_of_a_faithful_translation(workload_id):
    program = faithful(workload_id)
    sites = candidates(program, "dead_code_elimination")
    assert sites, f"{workload_id} computes nothing unused"
    step = apply_strategy(program, "dead_code_elimination", sites[0])
    while candidates(step.after, "dead_code_elimination"):  # chains go one block per step
        step = apply_strategy(step.after, "dead_code_elimination", 0)
    assert canonical(step.after.body) == canonical(workload(workload_id).body)  # what the frontend drops
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_frontend_and_strategy_share_one_rule():
    program = faithful("level1/cumsum_exclusive")
    outputs = [d.name for d in program.signature.by_role("output")]
    assert dead_blocks(program.body.blocks, outputs) == {0, 1}  # 0 feeds only the dead block 1
    assert dead_blocks(program.body.blocks, outputs, transitive=False) == {1}
    assert [s.path for s in candidates(program, "dead_code_elimination")] == [(1,)]
    assert candidates(workload("level1/cumsum_exclusive"), "dead_code_elimination") == []


def test_removes_a_dead_statement_of_a_kept_block():
    program = leir("input A: f32[8]\noutput C: f32[8]\n---\n"
                   "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}*2;D^{f32,g}_{i}=A^{f32,g}_{i}+1;];")
    step = apply_strategy(program, "dead_code_elimination", Site((0, 1)))
    assert canonical(step.after.body) == "L^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}*2;];"
    assert_interpreter_agrees(step)


def test_refuses_a_block_something_later_reads():
    program = faithful("level1/cumsum_exclusive")
    with pytest.raises(NotApplicableError):
        apply_strategy(program, "dead_code_elimination", Site((0,)))  # block 2 still reads its C
    with pytest.raises(NotApplicableError, match="read later"):
        get_strategy("dead_code_elimination").apply(program, Site((2,)), {})
