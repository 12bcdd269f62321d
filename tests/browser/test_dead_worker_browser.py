"""A dead worker in Chromium, with a real Celery worker: /status/ shows it live, then — SIGKILLed, with an
export queued — the page (refreshing itself) shows no live worker on the export queue and the work waiting
there, /healthz answers 503 saying why, and the export's page says it waits for a worker instead of
showing "queued 0 %" forever."""

from __future__ import annotations

import os
import signal

import pytest
from django.conf import settings as django_settings

from curation.models import Export, ReviewStatus, Step
from curation.services import workers
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step
from tests.backend.workers import publisher, purge, wait_for, worker

from .conftest import log_in, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEAT = 0.5


def test_a_killed_worker_shows_on_status_healthz_and_the_export_page(new_page, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.STEPTP_HEARTBEAT_SECONDS = BEAT  # the live server runs in this process: it reads the same
    step = engine_step(builtin("level1/layer_norm"))
    Step.objects.filter(pk=step.pk).update(review_status=ReviewStatus.APPROVED)
    make_user("cato", Role.CURATOR)
    app = publisher(django_settings.CELERY_BROKER_URL)
    purge(app, "export")
    status, curator = new_page(), new_page()
    export_row = status.locator('#queue-states tr[data-queue="export"]')
    with worker(django_settings.CELERY_BROKER_URL, queues="export",
                env={"STEPTP_HEARTBEAT_SECONDS": str(BEAT), "STEPTP_VAR_DIR": str(tmp_path)}) as process:
        wait_for(workers.live_workers, 60, "the worker's first heartbeat")
        status.goto("/status/")
        assert "1 live worker" in status.locator("#workers-check").inner_text()
        assert export_row.locator("td").nth(0).inner_text() == "1"
        assert "no live worker serves it" not in export_row.inner_text()
        os.killpg(process.pid, signal.SIGKILL)  # no clean sign-off: only the silence tells
        process.wait(10)
    wait_for(lambda: not workers.live_workers(), 30, "the dead worker's heartbeat to time out")
    try:
        log_in(curator, "cato")
        curator.goto("/exports/")
        curator.get_by_label("Name").fill("after-the-worker-died")
        curator.get_by_role("button", name="Create export").click()
        curator.wait_for_url("**/exports/*/")
        assert curator.locator("#export-status .run-status").inner_text() == "queued"
        waiting = curator.locator("#export-status .waiting-for-worker")
        assert waiting.inner_text().startswith("Waiting for a worker: no live worker serves the export queue")
        curator.wait_for_timeout(1500)  # the page polls every second: it keeps saying so
        assert waiting.is_visible()

        # the status page was not touched: its own refresh brings the dead worker and the backlog
        export_row.get_by_text("no live worker serves it").wait_for(timeout=25_000)
        assert export_row.locator("td").nth(0).inner_text() == "0"
        assert export_row.locator("td").nth(1).inner_text().startswith("1 — ")
        assert "0 live workers" in status.locator("#workers-check").inner_text()
        health = status.request.get("/healthz")
        assert health.status == 503
        body = health.json()
        assert body["status"] == "degraded"
        assert body["workers"]["error"] == "work waits with no live worker on: export"
        assert body["workers"]["queues"]["export"] == {"workers": 0, "waiting": 1}
        assert Export.objects.get().status == "queued"
    finally:
        purge(app, "export")  # the export's message has no worker; the next test starts clean
