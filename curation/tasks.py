"""Celery tasks: thin wrappers that call ``curation.services`` and record outcomes in the database.

Tasks must be idempotent (keyed by state hash + target) because ``acks_late`` redelivers them when a
worker dies. Each real task is routed to one of the queues declared in ``steptp_web.settings``.
"""

from __future__ import annotations

from celery import shared_task


@shared_task(name="curation.tasks.ping", ignore_result=True)
def ping() -> str:
    """A no-op a worker can run to prove the broker → worker path works end to end."""
    return "pong"
