"""Worker liveness: a real worker beats, a killed one is noticed, and the demo restarts its own worker.

A dead worker used to go unnoticed: ``/healthz`` said ok while an export sat queued forever.
"""

from __future__ import annotations

import io
import os
import signal
import sys

import pytest

from curation.management.commands.demo import WorkerSupervisor
from curation.models import Export
from curation.services import workers

from .workers import wait_for, worker

BEAT = 0.5


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_is_noticed_and_queued_work_turns_health_degraded(client, settings, tmp_path):
    settings.STEPTP_HEARTBEAT_SECONDS = BEAT
    Export.objects.create(name="waiting", formats=["messages"])  # queued: the export queue has work
    with worker(settings.CELERY_BROKER_URL, queues="export,verify.cpu",
                env={"STEPTP_HEARTBEAT_SECONDS": str(BEAT), "STEPTP_VAR_DIR": str(tmp_path)}) as process:
        live = wait_for(workers.live_workers, 60, "the worker's first heartbeat")
        assert sorted(live[0].queues) == ["export", "verify.cpu"] and live[0].pid == process.pid
        states = {q.name: q for q in workers.queue_states()}
        assert states["export"].workers == 1 and states["generate"].workers == 0
        # the worker may already be writing the export; either way the health check sees a live worker
        body = client.get("/healthz").json()
        assert body["workers"]["ok"] is True and body["workers"]["queues"]["export"]["workers"] == 1

        os.killpg(process.pid, signal.SIGKILL)  # no clean sign-off: only the silence tells
        process.wait(10)
        wait_for(lambda: not workers.live_workers(), 30, "the dead worker to time out")
    Export.objects.update(status="queued")
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["workers"]["error"] == "work waits with no live worker on: export"
    page = client.get("/status/").content.decode()
    assert "no live worker serves it" in page and "0 live workers" in page


def test_the_demo_restarts_a_dead_worker_and_gives_up_after_repeated_deaths():
    out = io.StringIO()
    supervisor = WorkerSupervisor([sys.executable, "-c", "import sys; sys.exit(3)"], out)
    supervisor.MAX_RESTARTS = 2
    supervisor.start()
    try:
        wait_for(lambda: "not restarting it" in out.getvalue(), 30, "the supervisor to give up")
    finally:
        supervisor.stop()
    text = out.getvalue()
    assert "exited with 3; restarting it (1 of 2)" in text and "(2 of 2)" in text
    assert "the worker died 3 times in a row (exit 3)" in text
