"""pytest plugin (``-p`` in pyproject's addopts): one ``var/``, CPU lock and Redis database per test process.

``make test`` runs the suite in several pytest-xdist processes. Each one's tests start real Celery workers
on the same queue names and write exports, SQLite files and broker messages under ``var/``, so two
processes sharing them would take each other's messages and overwrite each other's files. The plugin is
imported before pytest-django loads the settings, and it rewrites the environment the settings read, so the
worker processes a test starts inherit the same private folder and database.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

DEFAULT_VAR_DIR = Path(__file__).resolve().parent.parent / "var"


def redis_database_per_process(broker_url: str, process: int) -> str:
    """``broker_url`` moved ``process`` Redis databases up (``/0`` → ``/1`` for the second test process).

    Parallel test processes each run real Celery workers on the same queue names; on one Redis database a
    worker would take the other process's messages. Other brokers are returned unchanged (the RabbitMQ tests
    run in one process, see ``tests/backend/test_curation_worker.py``).
    """
    parts = urlsplit(broker_url)
    if parts.scheme not in {"redis", "rediss"}:
        return broker_url
    database = int(parts.path.strip("/") or 0) + process
    return urlunsplit(parts._replace(path=f"/{database}"))


def isolate_test_process(environ: MutableMapping[str, str] = os.environ) -> None:
    """Point ``STEPTP_VAR_DIR`` and a Redis broker URL at this xdist process's own; a no-op outside xdist."""
    process = environ.get("PYTEST_XDIST_WORKER", "")
    if not process:
        return
    var_dir = Path(environ.get("STEPTP_VAR_DIR") or DEFAULT_VAR_DIR) / "test-processes" / process
    environ["STEPTP_VAR_DIR"] = str(var_dir)
    # Sandbox jobs of one test process time alone among themselves, not behind the other processes' jobs
    # (that would serialise the suite; the timing tests assert ratios that tolerate a busy neighbour).
    var_dir.mkdir(parents=True, exist_ok=True)
    environ["STEPTP_CPU_LOCK"] = str(var_dir / "cpu.lock")
    if broker := environ.get("CELERY_BROKER_URL"):
        environ["CELERY_BROKER_URL"] = redis_database_per_process(broker, int(process.removeprefix("gw")))


isolate_test_process()
