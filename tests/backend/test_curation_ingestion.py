"""Ingestion is exactly-once and self-repairing: a partial import is found and completed, never counted done.

The first test makes the state a worker killed mid-import leaves behind by hand: the generator writes the
workload's file, then only its first record reaches the database and no import marker is written. The
second kills a real worker process mid-import (SIGKILL) and takes the restart path ``manage.py demo`` takes.
"""

from __future__ import annotations

import json
import os
import re
import signal

import pytest

from curation.models import GenerationStatus, Step, Workload
from curation.services import stalls, workers
from curation.services.generation import (
    IMPORT_PAUSE_ENV,
    REQUEST_DEPTH,
    REQUEST_MAX_STEPS_PER_STATE,
    _step_ids,
    generate_for_workload,
    generated_path,
    import_marker,
    incomplete_workloads,
    is_ingested,
    queue_incomplete,
    request_generation,
)
from curation.services.roles import Role
from curation.services.steps import import_records
from tests.backend.fixtures import builtin, user
from tests.backend.workers import publisher, purge, wait_for, worker

BEAT = 0.5


@pytest.mark.django_db
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


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_import_is_restarted_and_every_step_lands_exactly_once(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.STEPTP_HEARTBEAT_SECONDS = BEAT
    broker = settings.CELERY_BROKER_URL
    purge(publisher(broker), "generate")
    workload = builtin("level1/softmax")
    path = generated_path(workload, REQUEST_DEPTH, 0)
    env = {"STEPTP_HEARTBEAT_SECONDS": str(BEAT), "STEPTP_VAR_DIR": str(tmp_path)}
    # the import of a dozen records takes a fraction of a second: the test-only pause makes it seconds
    with worker(broker, queues="generate", env={**env, IMPORT_PAUSE_ENV: "0.4"}) as first:
        wait_for(workers.live_workers, 60, "the worker's first heartbeat")
        request_generation(user("cato", Role.CURATOR), workload)  # the page's Generate steps
        wait_for(lambda: Step.objects.filter(workload=workload).exists(), 300, "the import to begin")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    ids = _step_ids(path)  # the file is complete before its import starts
    stored = Step.objects.filter(workload=workload).count()
    assert len(ids) >= 4 and 0 < stored < len(ids), (stored, len(ids))
    assert not import_marker(path).exists() and incomplete_workloads(REQUEST_DEPTH) == [workload]
    # the worker's message died with it (the embedded broker does not redeliver): "running" forever,
    # until the dead worker's heartbeat times out and the state reads as stalled
    wait_for(lambda: stalls.generation_stalled(Workload.objects.get(pk=workload.pk)), 30, "the stall")

    # what `manage.py demo` does on start: queue again every workload not completely ingested
    assert queue_incomplete(REQUEST_DEPTH, max_steps_per_state=REQUEST_MAX_STEPS_PER_STATE) == [workload]
    assert Workload.objects.get(pk=workload.pk).generation_status == GenerationStatus.QUEUED
    with worker(broker, queues="generate", env=env):
        done = wait_for(lambda: Workload.objects.filter(pk=workload.pk, generation_status__in=[
            GenerationStatus.DONE, GenerationStatus.FAILED]).first(), 300, "the requeued generation")
    assert done.generation_status == GenerationStatus.DONE, done.generation_message
    # the last run to finish says what it found: with a broker that redelivers the dead worker's message
    # (Redis, RabbitMQ) that may be the redelivered run, after the requeued one stored the rest
    new, there = map(int, re.match(r"(\d+) new steps stored, (\d+) already there",
                                   done.generation_message).groups())
    assert new + there == len(ids) and there >= stored
    assert sorted(Step.objects.filter(workload=workload).values_list("step_id", flat=True)) == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert is_ingested(workload, REQUEST_DEPTH, 0) and incomplete_workloads(REQUEST_DEPTH) == []
