"""``manage.py demo`` — the main job on embedded defaults: one command, web app + a local worker.

It imports the built-in suite, creates the demo accounts, starts one Celery worker on every CPU queue
(threads pool: the verifier's sandbox starts its own processes, which a prefork child may not), queues
depth-1 generation for every workload that has no steps yet, and serves the web app. Ctrl-C (or SIGTERM)
stops the worker with the server. Running it again resumes: generation continues its files and the
import skips what is stored, so nothing is duplicated.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand

from curation.services import dispatch
from curation.services.generation import incomplete_workloads

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
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "steptp_web",
                "worker",
                "-Q",
                CPU_QUEUES,
                "-n",
                "demo@%h",
                "--pool",
                "threads",
                "--concurrency",
                str(options["worker_threads"]),
                "-l",
                "WARNING",
            ],
            env=os.environ.copy(),
        )
        try:
            self._queue_generation(options)
            self.stdout.write(
                f"worker pid {worker.pid}; serving http://{options['host']}:{options['port']}/ "
                "(Ctrl-C stops both)"
            )
            call_command("runserver", f"{options['host']}:{options['port']}", use_reloader=False)
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()

    def _queue_generation(self, options) -> None:
        """Queue every workload whose generation or import has not completed (a partial import included),
        after dropping queued work of an earlier run (no duplicates)."""
        dispatch.drop_queued(dispatch.GENERATE_QUEUE)
        todo = incomplete_workloads(options["depth"], seed=0)
        for workload in todo:
            dispatch.queue_generation(
                workload.pk, depth=options["depth"], max_steps_per_state=options["max_steps_per_state"]
            )
        self.stdout.write(f"queued generation for {len(todo)} workload(s)")
