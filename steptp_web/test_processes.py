"""pytest plugin (``-p`` in pyproject's addopts): one ``var/`` and one Redis database per test process.

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

from steptp_web.env import redis_database_per_process

DEFAULT_VAR_DIR = Path(__file__).resolve().parent.parent / "var"


def isolate_test_process(environ: MutableMapping[str, str] = os.environ) -> None:
    """Point ``STEPTP_VAR_DIR`` and a Redis broker URL at this xdist process's own; a no-op outside xdist."""
    process = environ.get("PYTEST_XDIST_WORKER", "")
    if not process:
        return
    var_dir = Path(environ.get("STEPTP_VAR_DIR") or DEFAULT_VAR_DIR)
    environ["STEPTP_VAR_DIR"] = str(var_dir / "test-processes" / process)
    if broker := environ.get("CELERY_BROKER_URL"):
        environ["CELERY_BROKER_URL"] = redis_database_per_process(broker, int(process.removeprefix("gw")))


isolate_test_process()
