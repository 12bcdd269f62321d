"""Real Celery worker processes for the integration tests, on the configured (or a given) broker.

The worker is a separate ``celery worker`` process in its own session (so a test can SIGKILL it with its
sandbox children), pointed at the test database, which tests using it must commit to
(``django_db(transaction=True)``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from celery import Celery
from django.conf import settings
from django.db import connection

REPO = Path(__file__).resolve().parents[2]
RABBITMQ_URL = os.environ.get("STEPTP_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672//")


def database_url() -> str:
    """The URL of the test database this process is using, for a worker process to open."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def publisher(broker_url: str) -> Celery:
    """A throwaway app with the project's settings on ``broker_url`` (publishes by task name)."""
    app = Celery("steptp_test_publisher", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # the write/read URLs, not broker_url: Celery lets $CELERY_BROKER_URL (set in CI) override broker_url
    app.conf.broker_url = app.conf.broker_write_url = app.conf.broker_read_url = broker_url
    if not broker_url.startswith("filesystem://"):
        app.conf.broker_transport_options = {"visibility_timeout": 5}
    return app


def purge(app: Celery, *queues: str) -> None:
    with app.connection_for_write() as conn:
        for name in queues:
            with contextlib.suppress(Exception):  # a queue not declared yet has nothing to purge
                conn.default_channel.queue_purge(name)


def take_queued(app: Celery, queue: str) -> list[tuple[str, list]]:
    """Take every message waiting on ``queue`` off the broker: (task name, positional args), oldest first."""
    taken = []
    with app.connection_for_read() as conn:
        channel = conn.default_channel
        while (message := channel.basic_get(queue, no_ack=True)) is not None:
            args, _kwargs, _embed = message.decode()
            taken.append((message.headers["task"], args))
    return taken


def run_queued(app: Celery, queue: str) -> list[tuple[str, list]]:
    """Take the messages waiting on ``queue`` and run each one's task here, as a worker would (``apply``).

    For tests that need a queued task's effect without a worker process's start-up time; the message, its
    task and the services it calls are the real ones.
    """
    from celery import current_app

    import curation.tasks  # noqa: F401 - registers the tasks the messages name

    taken = take_queued(app, queue)
    for name, args in taken:
        current_app.tasks[name].apply(args=args, throw=True)
    return taken


@contextmanager
def worker(broker_url: str, queues: str = "verify.cpu,generate,export", *, env: dict | None = None):
    """A worker process; yields the Popen. Stopped (or already killed) on exit."""
    environment = os.environ.copy()
    environment.update({"DATABASE_URL": database_url(), "CELERY_BROKER_URL": broker_url,
                        "CELERY_VISIBILITY_TIMEOUT": "5", "STEPTP_VAR_DIR": str(settings.VAR_DIR),
                        # a result cache of the test's own: a verification cached by an earlier test (or
                        # run) would finish before the worker can be killed mid-way
                        "STEPTP_CACHE_DIR": str(Path(settings.VAR_DIR) / "verify-cache")})
    if broker_url.startswith("filesystem://"):  # the publisher's message folder, whatever VAR_DIR is
        environment["STEPTP_BROKER_DIR"] = str(settings.STEPTP_BROKER_DIR)
    environment.update(env or {})
    log = Path(settings.VAR_DIR) / f"worker-{time.monotonic_ns()}.log"
    handle = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "steptp_web", "worker", "-Q", queues, "--pool", "threads",
         "--concurrency", "1", "-n", f"test{time.monotonic_ns()}@%h", "-l", "INFO"],
        cwd=REPO, env=environment, start_new_session=True, stdout=handle, stderr=subprocess.STDOUT)
    process.log_path = log  # type: ignore[attr-defined]
    try:
        yield process
    except BaseException:
        print(f"--- worker log {log}:\n{log.read_text(errors='replace')[-6000:]}")
        raise
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
        handle.close()


def wait_for(predicate, timeout: float, what: str, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def children_of(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]
