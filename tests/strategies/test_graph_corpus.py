"""Every graph strategy over every corpus program: candidates never raise, results pass the checker."""

from __future__ import annotations

import pytest

from leir.analysis import program_info
from leir.corpus import load_corpus
from leir.strategies import all_strategies, apply_strategy, candidates

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
