"""One (before, after) pair, one strategy label: the step planned first (catalogue order) carries it."""

from __future__ import annotations

from collections import Counter

from dataset.generation import GenerationConfig, generate
from dataset.records import load_records
from strategies import get_strategy

from .helpers import sources

PREFIX_SUM = "normal_loop_summation_on_exp_to_prefix_summation_on_exp"  # #41
ONLINE = "online_softmax"  # #42


def _run(path, strategies, seed=0):
    config = GenerationConfig(depth=2, seed=seed, breadth_cap=4, strategies=strategies)
    summary = generate(sources(("level1/softmax",)), config, path, verify=None)
    return summary, list(load_records(path))


def test_a_pair_two_strategies_produce_is_recorded_once_under_the_first_in_catalogue_order(tmp_path):
    """On softmax, #41 and #42 rewrite the exp-sum into the same program: one record, labelled #41."""
    summary, records = _run(tmp_path / "steps.jsonl", (ONLINE, PREFIX_SUM, "compute_inline"))
    pairs = Counter((r["parent"]["hash"], r["child"]["hash"]) for r in records if r["child"])
    assert pairs and max(pairs.values()) == 1, "a (before, after) pair recorded twice"
    assert summary.duplicates >= 1, "no pair was produced twice: the test no longer exercises the rule"
    assert get_strategy(PREFIX_SUM).number < get_strategy(ONLINE).number
    online_children = {r["child"]["hash"] for r in records if r["strategy"] == ONLINE and r["child"]}
    prefix_children = {r["child"]["hash"] for r in records if r["strategy"] == PREFIX_SUM and r["child"]}
    assert prefix_children and not online_children & prefix_children


def test_resuming_keeps_the_label_and_writes_nothing_new(tmp_path):
    path = tmp_path / "steps.jsonl"
    _summary, first = _run(path, (PREFIX_SUM, ONLINE))
    before = path.read_bytes()
    again, records = _run(path, (PREFIX_SUM, ONLINE))
    assert path.read_bytes() == before and again.written == 0
    assert again.duplicates >= 1 and len(records) == len(first)
