"""The seeded fitting/held-out split of the built-in workloads (``tuner.splits``)."""

from __future__ import annotations

import pytest

from tuner.splits import HELDOUT_SHARE, split_ids, workload_split
from workloads.registry import list_workloads


def test_the_split_is_seeded_disjoint_and_holds_out_enough_of_each_level():
    split = workload_split()
    assert split == workload_split()  # same seed, same split
    assert not set(split.fitting) & set(split.heldout)
    for level in (1, 2):
        ids = {w.id for w in list_workloads(level)}
        held = ids & set(split.heldout)
        assert len(held) >= 0.4 * len(ids)
        assert ids <= set(split.fitting) | set(split.heldout)
    assert split.side(split.heldout[0]) == "heldout" and split.side(split.fitting[0]) == "fitting"
    assert split.side("level9/nothing") is None
    assert workload_split(seed=1).heldout != split.heldout


def test_a_new_workload_moves_no_other_across_the_split():
    ids = [f"level1/w{i:02d}" for i in range(20)]
    before = split_ids({1: ids}, seed=3, share=HELDOUT_SHARE)
    for added in (f"level1/x{i}" for i in range(10)):
        after = split_ids({1: [*ids, added]}, seed=3, share=HELDOUT_SHARE)
        moved = (set(before.heldout) ^ set(after.heldout)) - {added}
        assert len(moved) <= 1, (added, moved)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="between 0 and 1"):
        split_ids({1: ["a"]}, share=1.0)
    with pytest.raises(ValueError, match="unknown split"):
        workload_split().ids("test")
