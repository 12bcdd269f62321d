"""A run writes its tree and series to the Trajectory row while it goes, not only at the end."""

from __future__ import annotations

import pytest

from curation.models import Trajectory
from curation.services.tuning import LiveProgress, best_path_hashes, create_trajectory, tree_of
from tests.backend.fixtures import builtin
from tests.tuner.conftest import source_of
from tuner.policies import RulePolicy
from tuner.run import tune
from tuner.search import Budget

pytestmark = pytest.mark.django_db


def test_every_measurement_updates_the_row(measurer_for_layer_norm):
    trajectory = create_trajectory(builtin("level1/layer_norm"), algorithm="chain",
                                   budget={"verifications": 3})
    live = LiveProgress(trajectory.pk)
    seen: list[tuple[int, int, float]] = []

    def hook(search) -> None:
        live(search)
        row = Trajectory.objects.get(pk=trajectory.pk)  # what the polling page reads at that moment
        seen.append((row.series[-1]["verifications"], len(row.explored), row.best_speedup))

    search = tune(source_of("level1/layer_norm"), RulePolicy(seed=0, measured={}), measurer_for_layer_norm,
                  Budget(verifications=3), algo="chain", progress=hook)
    counts = [0] + [s[0] for s in seen]  # a hook per measured step; a re-timed best adds one to its step
    steps = [later - earlier for earlier, later in zip(counts, counts[1:], strict=False)]
    assert set(steps) <= {1, 2} and steps.count(2) == search.usage.confirmations
    assert counts[-1] == search.usage.verifications
    assert seen[-1][1] == len(search.seen) and seen[-1][2] == search.best.speedup
    assert [s[1] for s in seen] == sorted(s[1] for s in seen)  # the tree only grows
    row = Trajectory.objects.get(pk=trajectory.pk)
    roots = tree_of(row.explored)
    assert len(roots) == 1 and roots[0]["label"] == "source"
    assert best_path_hashes(row.explored, search.best.hash) == {n.hash for n in search.best_path()}


@pytest.fixture
def measurer_for_layer_norm():
    from tuner.measure import Measurer

    m = Measurer(source_of("level1/layer_norm").program, cache=False, repeats=2, min_repeat_ms=2.0)
    yield m
    m.close()
