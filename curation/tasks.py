"""Celery tasks: thin wrappers that call ``curation.services`` and record outcomes in the database.

Tasks are only run here; they are queued by ``curation.services.dispatch``, which sends them by the names
it defines (imported below), so no service imports this module. Tasks are idempotent (keyed by state hash
+ target + seed, see ``services.verification``) because ``acks_late`` redelivers them when a worker dies.
A task retries only what can succeed on retry — the database or the broker going away — never a program
that failed to build or verify, which is a stored outcome. Verification is routed by target
(``dispatch.queue_for_target``): ``verify.cpu`` for llvm, ``verify.cuda`` for cuda.
"""

from __future__ import annotations

import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.db import InterfaceError, OperationalError

from curation.services import dispatch, workers
from curation.services.exports import run_export as write_export
from curation.services.generation import run_generation
from curation.services.tuning import run_trajectory
from curation.services.uploads import translate_upload as translate
from curation.services.verification import verify_step as verify
from verifier.errors import SandboxError

#: Errors worth a retry: the infrastructure, not the program.
TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError, SandboxError)


@shared_task(name=dispatch.PING, ignore_result=True)
def ping() -> str:
    """A no-op a worker can run to prove the broker → worker path works end to end."""
    return "pong"


@shared_task(name=dispatch.VERIFY_STEP, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)
def verify_step(step_pk: int, target: str = "llvm", seed: int = 0) -> str:
    return verify(step_pk, target=target, seed=seed).outcome


@shared_task(name=dispatch.RUN_EXPORT, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=3)
def run_export(export_pk: int) -> str:
    """Write one export's files (idempotent: a re-run rewrites the same bytes)."""
    return write_export(export_pk).status


@shared_task(name=dispatch.GENERATE_STEPS, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=3)
def generate_steps(
    workload_pk: int, depth: int = 1, seed: int = 0, max_steps_per_state: int | None = None
) -> int:
    """Generate and import one workload's steps (resumable: a redelivered task continues the file)."""
    report = run_generation(
        workload_pk, depth=depth, seed=seed, max_steps_per_state=max_steps_per_state
    )
    return report.created


@shared_task(name=dispatch.TRANSLATE_UPLOAD, autoretry_for=(OperationalError, InterfaceError),
             retry_backoff=True, max_retries=3)
def translate_upload(workload_pk: int) -> str:
    """Translate one uploaded source in the sandbox; a source that fails is a stored ``failed``, not an
    error of the task (only the database going away is retried)."""
    workload = translate(workload_pk)
    return workload.translation_status if workload else "deleted"


@shared_task(name=dispatch.TUNE, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=3)
def tune(trajectory_pk: int) -> str:
    """Run one stored tuner trajectory (``curation.services.tuning``); returns its final status."""
    return run_trajectory(trajectory_pk).status


_heartbeat_stops: dict[str, threading.Event] = {}


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    """Every worker beats (``services.workers``) from the moment it consumes until it stops."""
    name = sender.hostname
    queues = sorted(queue.name for queue in sender.task_consumer.queues)
    _heartbeat_stops[name] = workers.start_heartbeat(name, queues)


@worker_shutdown.connect
def _stop_heartbeat(sender: Any = None, **_: Any) -> None:
    name = getattr(sender, "hostname", None)
    stop = _heartbeat_stops.pop(name, None) if name else None
    if stop is not None:
        stop.set()
        try:
            workers.forget(name)
        except Exception as exc:  # the database may be gone too; the heartbeat then just times out
            print(f"heartbeat: could not sign off: {type(exc).__name__}: {exc}", flush=True)
