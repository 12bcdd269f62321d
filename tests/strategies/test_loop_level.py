"""The loop level as a whole: every strategy registered, candidates raise nothing on the corpus, traces
are grounded and name their site (two programs never read the same), same input gives the same step."""

from __future__ import annotations

import pytest

from leir.corpus import load_corpus
from leir.printer import canonical
from strategies import all_strategies, apply_strategy, candidates

from .helpers import workload

LOOP = [s.name for s in all_strategies("loop")]


def test_the_loop_level_has_its_nine_strategies_in_catalogue_order():
    assert [(s.number, s.name) for s in all_strategies("loop")] == [
        (10, "loop_reorder"), (11, "loop_tiling"), (12, "loop_split"), (13, "loop_fusion"),
        (14, "loop_unrolling"), (15, "loop_parallelization"), (16, "loop_vectorization"),
        (17, "loop_binding"), (18, "reduction_factorization")]
    for strategy in all_strategies("loop"):
        doc = strategy.__doc__ or ""
        assert "Before: ``" in doc and "After:  ``" in doc, strategy.name


@pytest.mark.parametrize("name", LOOP)
def test_candidates_over_the_corpus_raise_nothing_and_first_sites_apply(name):
    applied = 0
    for entry in load_corpus()[::8]:  # every 8th program: 49 real programs nobody here wrote
        sites = candidates(entry.program, name)
        if sites:
            step = apply_strategy(entry.program, name, 0)  # checked, grounded, not a no-op
            assert canonical(step.after.body) != canonical(entry.program.body)
            applied += 1
    assert applied or name in ("loop_vectorization",), f"{name} never applies on the corpus sample"


@pytest.mark.parametrize("name", [n for n in LOOP if n != "loop_vectorization"])
def test_traces_name_their_site_and_are_deterministic(name):
    texts = []
    for workload_id in ("level1/layer_norm", "level1/conv2d"):
        program = workload(workload_id)
        sites = candidates(program, name)
        assert sites, (name, workload_id)
        step = apply_strategy(program, name, 0)
        again = apply_strategy(program, name, 0)
        assert step.trace.render() == again.trace.render()
        assert canonical(step.after.body) == canonical(again.after.body)
        assert step.trace.quotes, "a trace quotes the fragments it talks about"
        texts.append(step.trace.render())
    assert texts[0] != texts[1]
