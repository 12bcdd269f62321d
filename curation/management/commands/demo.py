"""``manage.py demo`` — the main job on embedded defaults: one command, web app + a local worker.

It imports the built-in suite, creates the demo accounts, starts one Celery worker on every CPU queue
(threads pool: the verifier's sandbox starts its own processes, which a prefork child may not), queues
depth-1 generation for every workload that has no steps yet, and serves the web app. Ctrl-C (or SIGTERM)
stops the worker with the server. Running it again resumes: generation continues its files and the
import skips what is stored, so nothing is duplicated. A worker that dies is restarted, and what it left
running (its message died with it on the embedded broker) is queued again once the new one beats.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import close_old_connections
from django.utils import timezone

from curation.services import stalls, workers
from curation.services.generation import queue_incomplete

CPU_QUEUES = "generate,verify.cpu,export,tune"


class Command(BaseCommand):
    help = "Import the suite, start a local worker, queue depth-1 generation and serve the web app."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")
        parser.add_argument("--depth", type=int, default=1)
        parser.add_argument(
            "--max-steps-per-state",
            type=int,
            default=12,
            help="steps tried per state (a balanced sample), so steps appear quickly",
        )
        parser.add_argument("--worker-threads", type=int, default=2)

    def handle(self, *args, **options):
        # SIGTERM (a supervisor, `timeout`) must unwind through `finally` so the worker stops too
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        call_command("seed_demo", all_workloads=True)
        supervisor = WorkerSupervisor(worker_command(options["worker_threads"]), self.stdout,
                                      on_restart=lambda: self._requeue_stalled(options))
        supervisor.start()
        try:
            self._queue_generation(options)
            self.stdout.write(
                f"worker pid {supervisor.process.pid}; serving http://{options['host']}:{options['port']}/ "
                "(Ctrl-C stops both)"
            )
            call_command("runserver", f"{options['host']}:{options['port']}", use_reloader=False)
        finally:
            supervisor.stop()

    def _queue_generation(self, options) -> None:
        """Queue every workload whose generation or import has not completed (a partial import included),
        after dropping queued work of an earlier run (no duplicates)."""
        todo = queue_incomplete(options["depth"], max_steps_per_state=options["max_steps_per_state"])
        self.stdout.write(f"queued generation for {len(todo)} workload(s)")

    def _requeue_stalled(self, options) -> None:
        """After a restart: once the new worker beats, queue again what the dead one left running."""
        restarted = timezone.now()
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline:
                if any(w.started_at >= restarted for w in workers.live_workers()):
                    again = stalls.requeue_stalled(depth=options["depth"],
                                                   max_steps_per_state=options["max_steps_per_state"])
                    if again:
                        self.stdout.write(f"queued again what the dead worker left running: "
                                          f"{', '.join(w.name for w in again)}")
                    return
                time.sleep(1.0)
            self.stdout.write("the restarted worker has not beaten in 120 s; /status/ shows the queues")
        finally:
            close_old_connections()


def worker_command(threads: int) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "steptp_web", "worker", "-Q", CPU_QUEUES, "-n", "demo@%h",
            "--pool", "threads", "--concurrency", str(threads), "-l", "WARNING"]


class WorkerSupervisor:
    """The demo's one worker, restarted when it dies (a crash, an OOM kill) so queued work never waits on a
    dead process; after ``MAX_RESTARTS`` quick deaths in a row it gives up and says so."""

    MAX_RESTARTS = 5
    #: A worker that ran this long before dying counts as healthy again (the restart count starts over).
    STABLE_SECONDS = 60.0

    def __init__(self, command: list[str], out, on_restart: Callable[[], None] | None = None) -> None:
        self.command = command
        self.out = out
        #: Run (in its own thread) after each restart: the demo queues again what the dead worker held.
        self.on_restart = on_restart
        self.process: subprocess.Popen = None  # type: ignore[assignment]
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="demo-worker-watch", daemon=True)

    def start(self) -> None:
        self._spawn()
        self._thread.start()

    def _spawn(self) -> None:
        self.process = subprocess.Popen(self.command, env=os.environ.copy())
        self._started = time.monotonic()

    def _watch(self) -> None:
        while not self._stopping.wait(2.0):
            code = self.process.poll()
            if code is None:
                continue
            if time.monotonic() - self._started >= self.STABLE_SECONDS:
                self.restarts = 0
            if self.restarts >= self.MAX_RESTARTS:
                self.out.write(f"the worker died {self.restarts + 1} times in a row (exit {code}); not "
                               "restarting it: queued work waits. Start one with `make worker` "
                               "(/status/ shows the queues).")
                return
            self.restarts += 1
            self.out.write(f"the worker (pid {self.process.pid}) exited with {code}; restarting it "
                           f"({self.restarts} of {self.MAX_RESTARTS})")
            self._spawn()
            if self.on_restart is not None:
                threading.Thread(target=self.on_restart, name="demo-requeue", daemon=True).start()

    def stop(self) -> None:
        self._stopping.set()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
