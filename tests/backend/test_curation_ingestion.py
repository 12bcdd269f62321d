"""Ingestion is exactly-once and self-repairing: a partial import is found and completed, never counted done.

The state a worker killed mid-import leaves behind is made for real: the generator writes the workload's
file, then only its first record reaches the database and no import marker is written.
"""

from __future__ import annotations

import json

import pytest

from curation.models import Step
from curation.services.generation import (
    generate_for_workload,
    generated_path,
    import_marker,
    incomplete_workloads,
    is_ingested,
)
from curation.services.steps import import_records
from tests.backend.fixtures import builtin

pytestmark = pytest.mark.django_db


def test_a_partial_import_is_found_and_completed_exactly_once(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    workload = builtin("level1/softmax")
    options = {"depth": 1, "seed": 0, "max_steps_per_state": 3}
    report = generate_for_workload(workload.pk, **options)
    path = generated_path(workload, 1, 0)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    stored = [r for r in records if r.get("child")]
    assert report.created == len(stored) >= 2
    assert is_ingested(workload, 1, 0) and workload not in incomplete_workloads(1)

    # a worker killed after writing the file, mid-import: one step stored, no marker
    Step.objects.all().delete()
    import_marker(path).unlink()
    import_records(stored[:1])
    assert Step.objects.count() == 1
    assert incomplete_workloads(1) == [workload]

    again = generate_for_workload(workload.pk, **options)
    assert (again.created, again.unchanged) == (len(stored) - 1, 1)
    assert sorted(Step.objects.values_list("step_id", flat=True)) == sorted(r["step_id"] for r in stored)
    assert incomplete_workloads(1) == []

    # rows lost from the database after a finished import: the marker alone does not make it done
    Step.objects.filter(step_id=stored[0]["step_id"]).delete()
    assert not is_ingested(workload, 1, 0)
