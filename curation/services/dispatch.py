"""The one place curation queues work: every Celery task is sent from here, by name, once the caller commits.

Views, the REST API and the management commands reach this module only through the other services (or,
for a command's ``--queue``, directly); nothing else in curation calls ``.delay``/``.apply_async``. Tasks
are sent by name with ``send_task``, so this module never imports ``curation.tasks``: the tasks import
their names from here and call the services, and no service imports the tasks back.

A message is sent on commit (``transaction.on_commit``; at once outside a transaction): a worker must find
the rows the task reads, and a request that rolls back queues nothing.
"""

from __future__ import annotations

from typing import Any

from celery import current_app
from django.db import transaction

PING = "curation.tasks.ping"
VERIFY_STEP = "curation.tasks.verify_step"
RUN_EXPORT = "curation.tasks.run_export"
GENERATE_STEPS = "curation.tasks.generate_steps"
TUNE = "curation.tasks.tune"
TRANSLATE_UPLOAD = "curation.tasks.translate_upload"

#: The queue each task goes to (verification is routed by target, see ``queue_for_target``).
GENERATE_QUEUE, EXPORT_QUEUE, TUNE_QUEUE = "generate", "export", "tune"


def queue_for_target(target: str) -> str:
    """The verify queue that serves ``target``: GPU workers take ``verify.cuda``, CPU ones ``verify.cpu``."""
    return "verify.cuda" if target == "cuda" else "verify.cpu"


def _send(task: str, args: tuple[Any, ...], queue: str) -> None:
    transaction.on_commit(lambda: current_app.send_task(task, args, queue=queue))


def queue_verification(step_pk: int, *, target: str = "llvm", seed: int = 0) -> None:
    """Verify the step's current after-state on ``seed`` (a seed already used reads the stored outcome)."""
    _send(VERIFY_STEP, (step_pk, target, seed), queue_for_target(target))


def queue_export(export_pk: int) -> None:
    """Write one stored export's files."""
    _send(RUN_EXPORT, (export_pk,), EXPORT_QUEUE)


def queue_generation(workload_pk: int, *, depth: int = 1, seed: int = 0,
                     max_steps_per_state: int | None = None) -> None:
    """Generate, verify and import one workload's steps (resumable)."""
    _send(GENERATE_STEPS, (workload_pk, depth, seed, max_steps_per_state), GENERATE_QUEUE)


def queue_translation(workload_pk: int) -> None:
    """Translate one uploaded source in the sandbox (on ``generate``: the CPU workers' heavy queue)."""
    _send(TRANSLATE_UPLOAD, (workload_pk,), GENERATE_QUEUE)


def queue_tuning(trajectory_pk: int) -> None:
    """Run one stored tuner trajectory."""
    _send(TUNE, (trajectory_pk,), TUNE_QUEUE)


def drop_queued(queue: str) -> None:
    """Drop every message waiting on ``queue`` (``manage.py demo`` restarting without duplicates)."""
    with current_app.connection_for_write() as connection:
        connection.default_channel.queue_purge(queue)
