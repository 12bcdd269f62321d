"""A state a lost worker left running is told apart from one a live worker holds, and can be retried.

A worker killed mid-task leaves its workload "running" or "translating"; on the embedded broker its message
is gone too. The state is stalled when no live worker on the ``generate`` queue started before it; the
retry, ``requeue_stalled`` and the demo's after-restart path queue it again. Heartbeats are real rows.
"""

from __future__ import annotations

import io
import sys
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from curation.management.commands.demo import Command, WorkerSupervisor
from curation.models import GenerationStatus, TranslationStatus, Workload
from curation.services import dispatch, stalls, workers
from curation.services.generation import AlreadyGenerating, request_generation
from curation.services.roles import PermissionDenied, Role
from tests.backend.fixtures import builtin, user
from tests.backend.test_curation_uploads import GOOD
from tests.backend.workers import publisher, purge, take_queued, wait_for

EARLIER = timedelta(seconds=60)


@pytest.fixture
def broker(settings):
    app = publisher(settings.CELERY_BROKER_URL)
    purge(app, "generate")
    return app


def running(name: str = "level1/relu", *, ago: float = 10) -> Workload:
    workload = builtin(name)
    Workload.objects.filter(pk=workload.pk).update(generation_status=GenerationStatus.RUNNING,
                                                   generation_message="3 of 12 steps generated",
                                                   generation_since=timezone.now() - timedelta(seconds=ago))
    workload.refresh_from_db()
    return workload


def translating(name: str = "mine/relu2") -> Workload:
    return Workload.objects.create(name=name, source=GOOD, origin="upload",
                                   translation_status=TranslationStatus.TRANSLATING,
                                   translation_since=timezone.now() - timedelta(seconds=10))


@pytest.mark.django_db
def test_running_is_stalled_only_when_no_live_worker_on_generate_started_before_it():
    workload = running()
    assert stalls.generation_stalled(workload)  # no worker at all
    workers.beat("old@host", ["export"], started_at=timezone.now() - EARLIER)
    assert stalls.generation_stalled(workload)  # a worker, but not on the generate queue
    workers.beat("old@host", ["export", "generate"], started_at=timezone.now() - EARLIER)
    assert not stalls.generation_stalled(workload)  # it may be the one holding the task
    workers.beat("old@host", ["export", "generate"], started_at=timezone.now())  # restarted since
    assert stalls.generation_stalled(workload) and stalls.stalled_workloads() == [workload]
    Workload.objects.filter(pk=workload.pk).update(generation_status=GenerationStatus.QUEUED)
    workload.refresh_from_db()
    assert not stalls.generation_stalled(workload) and stalls.stalled_workloads() == []


@pytest.mark.django_db
def test_a_stalled_generation_can_be_retried_and_a_held_one_cannot(broker, django_capture_on_commit_callbacks):
    curator = user("cato", Role.CURATOR)
    workload = running()
    workers.beat("w@host", ["generate"], started_at=timezone.now() - EARLIER)
    with pytest.raises(AlreadyGenerating):
        request_generation(curator, workload)
    assert take_queued(broker, "generate") == []
    workers.forget("w@host")  # the worker is gone: the retry goes through
    stalled_since = workload.generation_since
    with django_capture_on_commit_callbacks(execute=True):
        again = request_generation(curator, workload)
    assert again.generation_status == GenerationStatus.QUEUED and again.generation_message == ""
    assert again.generation_since > stalled_since
    assert take_queued(broker, "generate") == [(dispatch.GENERATE_STEPS, [workload.pk, 1, 0, 12])]


@pytest.mark.django_db
def test_requeue_stalled_queues_again_what_a_lost_worker_left_and_nothing_else(
        broker, django_capture_on_commit_callbacks):
    generation, translation = running(), translating()
    held = running("level1/softmax", ago=1)
    workers.beat("w@host", ["generate"], started_at=timezone.now() - timedelta(seconds=5))  # holds `held`
    with django_capture_on_commit_callbacks(execute=True):
        assert stalls.requeue_stalled(depth=1, max_steps_per_state=12) == [generation, translation]
    generation.refresh_from_db()
    translation.refresh_from_db()
    held.refresh_from_db()
    assert generation.generation_status == GenerationStatus.QUEUED
    assert translation.translation_status == TranslationStatus.QUEUED
    assert held.generation_status == GenerationStatus.RUNNING
    assert sorted(take_queued(broker, "generate")) == sorted([
        (dispatch.GENERATE_STEPS, [generation.pk, 1, 0, 12]), (dispatch.TRANSLATE_UPLOAD, [translation.pk])])


@pytest.mark.django_db
def test_a_stalled_translation_is_retried_by_a_curator_only(broker, django_capture_on_commit_callbacks):
    workload, curator = translating(), user("cato", Role.CURATOR)
    with pytest.raises(PermissionDenied):
        stalls.retry_translation(user("vera", Role.VIEWER), workload)
    workers.beat("w@host", ["generate"], started_at=timezone.now() - EARLIER)
    with pytest.raises(stalls.NotStalled, match="translating, not stalled"):
        stalls.retry_translation(curator, workload)
    workers.forget("w@host")
    with django_capture_on_commit_callbacks(execute=True):
        stalls.retry_translation(curator, workload)
    workload.refresh_from_db()
    assert workload.translation_status == TranslationStatus.QUEUED
    assert take_queued(broker, "generate") == [(dispatch.TRANSLATE_UPLOAD, [workload.pk])]


@pytest.mark.django_db(transaction=True)
def test_after_a_restart_the_demo_requeues_the_stall_once_the_new_worker_beats(broker):
    workload = running()
    workers.beat("demo@host", ["generate"], started_at=timezone.now() - EARLIER)  # the worker, before it died
    out = io.StringIO()
    command = Command(stdout=out)
    thread = threading.Thread(target=command._requeue_stalled,
                              args=({"depth": 1, "max_steps_per_state": 12},), daemon=True)
    thread.start()
    thread.join(2.5)
    assert thread.is_alive() and take_queued(broker, "generate") == []  # waits for the new worker's beat
    workers.beat("demo@host", ["generate"], started_at=timezone.now())  # the restarted worker
    thread.join(10)
    assert not thread.is_alive()
    assert "queued again what the dead worker left running: level1/relu" in out.getvalue()
    assert take_queued(broker, "generate") == [(dispatch.GENERATE_STEPS, [workload.pk, 1, 0, 12])]
    assert Workload.objects.get(pk=workload.pk).generation_status == GenerationStatus.QUEUED


def test_the_supervisor_runs_its_restart_hook_after_each_restart():
    restarts = []
    supervisor = WorkerSupervisor([sys.executable, "-c", "import sys; sys.exit(3)"], io.StringIO(),
                                  on_restart=lambda: restarts.append(1))
    supervisor.MAX_RESTARTS = 2
    supervisor.start()
    try:
        wait_for(lambda: len(restarts) == 2, 30, "two restarts")
    finally:
        supervisor.stop()


@pytest.mark.django_db(transaction=True)
def test_the_demo_start_path_drops_old_messages_and_queues_pending_translations_and_unfinished_generations(
        broker, settings, tmp_path):
    from curation.services.generation import queue_incomplete

    settings.VAR_DIR = tmp_path
    workload = builtin("level1/relu")  # translated, never generated
    upload = Workload.objects.create(name="mine/relu2", source=GOOD, origin="upload",
                                     translation_status=TranslationStatus.QUEUED)
    broker.send_task(dispatch.PING, (), queue="generate")  # an earlier run's leftover message
    assert queue_incomplete(1, max_steps_per_state=12) == [workload]
    assert take_queued(broker, "generate") == [(dispatch.TRANSLATE_UPLOAD, [upload.pk]),
                                               (dispatch.GENERATE_STEPS, [workload.pk, 1, 0, 12])]
    assert Workload.objects.get(pk=workload.pk).generation_status == GenerationStatus.QUEUED
