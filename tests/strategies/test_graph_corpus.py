"""Every graph strategy over every corpus program: candidates never raise, results pass the checker."""

from __future__ import annotations

import pytest

from leir.analysis import program_info
from leir.corpus import load_corpus
from strategies import all_strategies, apply_strategy, candidates

GRAPH = [s.name for s in all_strategies("graph")]


@pytest.mark.parametrize("name", GRAPH)
def test_candidates_over_the_corpus_raise_nothing_and_apply_cleanly(name):
    total = 0
    for entry in load_corpus():
        sites = candidates(entry.program, name)
        total += len(sites)
        if sites:  # the first and the last site of each program: checked by apply_strategy's gates
            for site in {0, len(sites) - 1}:
                step = apply_strategy(entry.program, name, site)
                assert program_info(step.after).ok
    assert name == "operator_fission" or name == "dead_code_elimination" or total >= 20


@pytest.mark.parametrize("name", GRAPH)
def test_same_program_gives_the_same_steps_byte_for_byte(name):
    from leir.program import dump_program, load_program

    from .helpers import workload

    program = workload("level1/layer_norm")
    twin = load_program(dump_program(program))  # an equal program built independently
    first, again = candidates(program, name), candidates(twin, name)
    assert first == again
    for index in range(min(3, len(first))):
        one, two = apply_strategy(program, name, index), apply_strategy(twin, name, index)
        assert dump_program(one.after) == dump_program(two.after)
        assert one.trace.render() == two.trace.render()
