"""Liveness checks behind ``/healthz`` and the home page: a real database query and a real broker connection.

Each check returns a plain dict (``ok``, ``latency_ms``, ``error`` when it failed) so the JSON view and the
HTML page render the same facts. Broker URLs are shown with their password masked.
"""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from kombu import Connection
from kombu.utils.url import maybe_sanitize_url

#: Distributions whose versions an operator needs when reading a bug report.
VERSIONED_DISTRIBUTIONS: tuple[str, ...] = (
    "steptp", "Django", "celery", "kombu", "psycopg", "apache-tvm", "apache-tvm-ffi", "torch",
)


def _elapsed_ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 2)


def check_database(connection: BaseDatabaseWrapper | None = None) -> dict[str, Any]:
    """Run ``SELECT 1`` (on the default connection unless given one); a failure closes the connection."""
    connection = connection if connection is not None else connections["default"]
    result: dict[str, Any] = {"ok": False, "vendor": connection.vendor}
    start = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            row = cursor.fetchone()
        result["ok"] = row is not None and row[0] == 1
    except DatabaseError as exc:
        result["error"] = f"{type(exc).__name__}: {exc}".strip()
        connection.close()
    result["latency_ms"] = _elapsed_ms(start)
    return result


def check_broker(url: str, transport_options: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
    """Open a real connection to the broker (one retry, bounded by ``timeout``) and close it again."""
    conn = Connection(url, transport_options=dict(transport_options or {}), connect_timeout=timeout)
    result: dict[str, Any] = {"ok": False, "url": maybe_sanitize_url(url), "transport": conn.transport_cls}
    start = time.perf_counter()
    try:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
        if conn.transport.driver_type == "filesystem":
            _check_filesystem_broker(conn.transport_options)
        result["ok"] = True
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        if conn.password:
            message = message.replace(conn.password, "**")
        result["error"] = message
    finally:
        conn.release()
    result["latency_ms"] = _elapsed_ms(start)
    return result


def _check_filesystem_broker(options: dict[str, Any]) -> None:
    """The embedded broker "connects" without touching disk, so check its folders are usable instead."""
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        folder = options.get(key)
        if not folder or not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
            raise OSError(f"broker folder {key}={folder!r} is missing or not writable")


def versions() -> dict[str, str | None]:
    """Installed versions read from package metadata, so heavy packages (torch, TVM) are never imported."""
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in VERSIONED_DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def health_report() -> dict[str, Any]:
    """Everything ``/healthz`` returns; ``status`` is ``ok`` only when every check passed."""
    database = check_database()
    broker = check_broker(
        settings.CELERY_BROKER_URL,
        getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None),
        settings.STEPTP_HEALTH_TIMEOUT,
    )
    workers = check_workers() if database["ok"] else {"ok": False, "error": "the database is down"}
    healthy = database["ok"] and broker["ok"] and workers["ok"]
    return {
        "status": "ok" if healthy else "degraded",
        "database": database,
        "broker": broker,
        "workers": workers,
        "versions": versions(),
    }


def check_workers() -> dict[str, Any]:
    """Live workers per queue and the work waiting; not ok when a queue holds work no live worker serves."""
    from curation.services.workers import live_workers, queue_states

    states = queue_states()
    stalled = [q.name for q in states if q.stalled]
    now = time.time()
    return {
        "ok": not stalled,
        "live": [{"name": w.name, "queues": w.queues,
                  "seconds_since_beat": round(now - w.last_seen.timestamp(), 1)} for w in live_workers()],
        "queues": {q.name: {"workers": q.workers, "waiting": q.waiting} for q in states},
        **({"error": f"work waits with no live worker on: {', '.join(stalled)}"} if stalled else {}),
    }
