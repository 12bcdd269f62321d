"""Celery tasks: thin wrappers that call ``curation.services`` and record outcomes in the database.

Tasks are idempotent (keyed by state hash + target + seed, see ``services.verification``) because
``acks_late`` redelivers them when a worker dies. A task retries only what can succeed on retry — the
database or the broker going away — never a program that failed to build or verify, which is a stored
outcome. Verification is routed by target: ``verify.cpu`` for llvm, ``verify.cuda`` for cuda.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from verifier.errors import SandboxError

#: Errors worth a retry: the infrastructure, not the program.
TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError, SandboxError)


@shared_task(name="curation.tasks.ping", ignore_result=True)
def ping() -> str:
    """A no-op a worker can run to prove the broker → worker path works end to end."""
    return "pong"


def queue_for_target(target: str) -> str:
    return "verify.cuda" if target == "cuda" else "verify.cpu"


@shared_task(name="curation.tasks.verify_step", autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)
def verify_step(step_pk: int, target: str = "llvm", seed: int = 0) -> str:
    from curation.services.verification import verify_step as run

    return run(step_pk, target=target, seed=seed).outcome


def enqueue_verification(step, *, target: str = "llvm", seed: int = 0) -> None:
    """Queue the step's verification on the queue that serves its target."""
    verify_step.apply_async((step.pk, target, seed), queue=queue_for_target(target))


@shared_task(name="curation.tasks.run_export", autoretry_for=TRANSIENT, retry_backoff=True, max_retries=3)
def run_export(export_pk: int) -> str:
    """Write one export's files (idempotent: a re-run rewrites the same bytes)."""
    from curation.services.exports import run_export as run

    return run(export_pk).status


@shared_task(name="curation.tasks.generate_steps", autoretry_for=TRANSIENT, retry_backoff=True, max_retries=3)
def generate_steps(
    workload_pk: int, depth: int = 1, seed: int = 0, max_steps_per_state: int | None = None
) -> int:
    """Generate and import one workload's steps (resumable: a redelivered task continues the file)."""
    from curation.services.generation import generate_for_workload

    report = generate_for_workload(
        workload_pk, depth=depth, seed=seed, max_steps_per_state=max_steps_per_state
    )
    return report.created


def enqueue_generation(
    workload, *, depth: int = 1, seed: int = 0, max_steps_per_state: int | None = None
) -> None:
    generate_steps.apply_async((workload.pk, depth, seed, max_steps_per_state), queue="generate")


@shared_task(name="curation.tasks.tune", autoretry_for=TRANSIENT, retry_backoff=True, max_retries=3)
def tune(trajectory_pk: int) -> str:
    """Run one stored tuner trajectory (``curation.services.tuning``); returns its final status."""
    from curation.services.tuning import run_trajectory

    return run_trajectory(trajectory_pk).status


def enqueue_tuning(trajectory) -> None:
    tune.apply_async((trajectory.pk,), queue="tune")
