"""Work a lost worker left behind, told apart from work that only waits for a worker.

A worker killed mid-task leaves its workload "running" (or "translating"), and on the embedded filesystem
broker its message is gone with it, so nothing would ever move the state on and the page hid its Generate
button for good. Every task writes its state with a time (``generation_since``, ``translation_since``) and
every worker's heartbeat says when it started, so a running state is *stalled* when no live worker on the
``generate`` queue started before that time: whichever worker held the task is dead. A *queued* state with
no live worker only *waits* (its message is still on the broker) and says so.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from curation.models import GenerationStatus, TranslationStatus, Workload
from curation.services import dispatch, workers
from curation.services.roles import AnyUser, Role, require


def _held(since: datetime | None, queue: str = dispatch.GENERATE_QUEUE) -> bool:
    """A live worker on ``queue`` was already running at ``since``, so it may be the one holding the task."""
    return any(queue in w.queues and (since is None or w.started_at <= since) for w in workers.live_workers())


def waiting_for_worker(queue: str) -> bool:
    """No live worker serves ``queue``: what is queued there waits until one starts."""
    return not any(queue in w.queues for w in workers.live_workers())


def generation_stalled(workload: Workload) -> bool:
    """The workload's generation says running, but the worker that ran it is gone."""
    return workload.generation_status == GenerationStatus.RUNNING and not _held(workload.generation_since)


def translation_stalled(workload: Workload) -> bool:
    """The upload says translating, but the worker that translated it is gone."""
    return (workload.translation_status == TranslationStatus.TRANSLATING
            and not _held(workload.translation_since))


def stalled_workloads() -> list[Workload]:
    """Every workload whose generation or translation a lost worker left running."""
    running = Workload.objects.filter(Q(generation_status=GenerationStatus.RUNNING)
                                      | Q(translation_status=TranslationStatus.TRANSLATING))
    return [w for w in running.order_by("pk") if generation_stalled(w) or translation_stalled(w)]


def requeue_translation(workload: Workload) -> None:
    """Mark the upload queued again and queue its translation (idempotent on the worker's side)."""
    Workload.objects.filter(pk=workload.pk).update(translation_status=TranslationStatus.QUEUED,
                                                   translation_since=timezone.now())
    dispatch.queue_translation(workload.pk)


def requeue_generation(workload: Workload, *, depth: int, max_steps_per_state: int | None) -> None:
    """Mark the generation queued again and queue it (resumable: the file and the import continue)."""
    Workload.objects.filter(pk=workload.pk).update(generation_status=GenerationStatus.QUEUED,
                                                   generation_message="", generation_since=timezone.now())
    dispatch.queue_generation(workload.pk, depth=depth, max_steps_per_state=max_steps_per_state)


def requeue_stalled(*, depth: int, max_steps_per_state: int | None) -> list[Workload]:
    """Queue again what a lost worker left running (``manage.py demo`` does so after a worker restart)."""
    stalled = stalled_workloads()
    for workload in stalled:
        if translation_stalled(workload):
            requeue_translation(workload)
        else:
            requeue_generation(workload, depth=depth, max_steps_per_state=max_steps_per_state)
    return stalled


class NotStalled(ValueError):
    """The translation is not one a lost worker left behind (nothing to retry)."""


def retry_translation(user: AnyUser, workload: Workload) -> None:
    """A curator's "retry" of an upload whose translation a lost worker left behind."""
    require(user, Role.CURATOR, "retrying a translation")
    if not translation_stalled(workload):
        raise NotStalled(f"the translation of {workload.name} is {workload.translation_status}, not stalled")
    requeue_translation(workload)
