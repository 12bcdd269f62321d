"""Fixtures of the tuner tests: small real workloads, a measurer on a warm pool, a search factory."""

from __future__ import annotations

import pytest

from dataset.generation import Source
from dataset.records import SourceInfo
from leir.program import program_hash
from tests.strategies.helpers import workload


def source_of(workload_id: str) -> Source:
    program = workload(workload_id)
    info = SourceInfo(f"{workload_id}@f32#0", workload_id, int(workload_id[5]), "f32", 0, {},
                      program_hash(program))
    return Source(info, program)


@pytest.fixture(scope="module")
def layer_norm() -> Source:
    return source_of("level1/layer_norm")


@pytest.fixture(scope="module")
def measurer(layer_norm):
    """Verification and (short) timing with no result cache, so every step is really built and run."""
    from tuner.measure import Measurer

    m = Measurer(layer_norm.program, cache=False, repeats=2, min_repeat_ms=2.0)
    yield m
    m.close()
