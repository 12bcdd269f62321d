"""Worker liveness: heartbeats written by every Celery worker, read by the health checks and the pages.

A worker that died leaves its queue's work waiting forever while every page still said OK; with heartbeats
the app can tell, per queue, how many workers are alive and how much work waits for them, and
``/healthz`` turns ``degraded`` when a queue holds work that no live worker serves.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

from curation.models import (
    Export,
    GenerationStatus,
    RunStatus,
    Step,
    Trajectory,
    TranslationStatus,
    VerificationStatus,
    WorkerHeartbeat,
    Workload,
)

#: A worker silent for this many heartbeat intervals counts as gone.
MISSED_BEATS = 3


def beat(name: str, queues: list[str], *, pid: int | None = None, started_at: datetime | None = None) -> None:
    """Record that worker ``name`` (serving ``queues``) is alive now."""
    now = timezone.now()
    WorkerHeartbeat.objects.update_or_create(
        name=name, defaults={"queues": sorted(queues), "pid": pid or os.getpid(), "last_seen": now,
                             "started_at": started_at or now})


def forget(name: str) -> None:
    """A worker that shuts down cleanly says so at once instead of waiting to time out."""
    WorkerHeartbeat.objects.filter(name=name).delete()


def live_workers() -> list[WorkerHeartbeat]:
    cutoff = timezone.now() - timedelta(seconds=MISSED_BEATS * settings.STEPTP_HEARTBEAT_SECONDS)
    return list(WorkerHeartbeat.objects.filter(last_seen__gte=cutoff).order_by("name"))


def backlog() -> dict[str, int]:
    """Work waiting per queue, from the database's statuses (what was asked for and not yet done)."""
    waiting = (RunStatus.QUEUED, RunStatus.RUNNING)
    translating = (TranslationStatus.QUEUED, TranslationStatus.TRANSLATING)
    generating = (GenerationStatus.QUEUED, GenerationStatus.RUNNING)
    return {
        # uploads to translate and generations asked for from the page or the API
        "generate": Workload.objects.filter(Q(translation_status__in=translating)
                                            | Q(generation_status__in=generating)).count(),
        "verify.cpu": Step.objects.filter(verification_status=VerificationStatus.QUEUED).count(),
        "export": Export.objects.filter(status__in=waiting).count(),
        "tune": Trajectory.objects.filter(status__in=waiting).count(),
    }


@dataclass(frozen=True)
class QueueState:
    name: str
    workers: int
    waiting: int

    @property
    def stalled(self) -> bool:
        """Work waits and no live worker serves the queue."""
        return self.waiting > 0 and self.workers == 0


def queue_states() -> list[QueueState]:
    alive = live_workers()
    waiting = backlog()
    return [QueueState(name, sum(name in w.queues for w in alive), waiting.get(name, 0))
            for name in settings.STEPTP_QUEUES]


def start_heartbeat(name: str, queues: list[str]) -> threading.Event:
    """Beat every ``STEPTP_HEARTBEAT_SECONDS`` from a daemon thread until the returned event is set."""
    stop = threading.Event()
    started = timezone.now()

    def run() -> None:
        while True:
            try:
                beat(name, queues, started_at=started)
            except Exception as exc:  # a database hiccup must not kill the worker: say it and beat on
                print(f"heartbeat: {type(exc).__name__}: {exc}", flush=True)
            finally:
                close_old_connections()
            if stop.wait(settings.STEPTP_HEARTBEAT_SECONDS):
                return

    threading.Thread(target=run, name="steptp-heartbeat", daemon=True).start()
    return stop
