"""Tuner runs in Chromium: a curator starts a run, a real Celery worker on `tune` runs it, and the run page
updates by itself (status, explored tree, chart points, series table); axe finds no serious violation."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from curation.models import RunStatus, Trajectory
from curation.services.roles import Role
from tests.backend.fixtures import builtin
from tests.backend.workers import publisher, purge, worker

from .conftest import axe_violations, log_in, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_start_a_run_and_watch_its_page_update(page, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    builtin("level1/layer_norm")
    make_user("cato", Role.CURATOR)
    broker = django_settings.CELERY_BROKER_URL
    purge(publisher(broker), "tune")
    log_in(page, "cato")
    page.goto("/runs/")
    assert axe_violations(page) == []
    page.get_by_label("Workload").select_option("level1/layer_norm")
    page.get_by_label("Algorithm").select_option("chain")
    page.get_by_label("Verifications").fill("2")
    page.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    run = Trajectory.objects.get()
    assert page.locator("#run-live .run-status").inner_text() == "queued"
    assert page.get_by_text("Nothing explored yet.").is_visible()
    with worker(broker, queues="tune"):
        page.locator("#run-live .status-done").wait_for(timeout=240_000)  # polled, never reloaded
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    assert page.locator(".tree-node").count() == len(run.explored) >= 2
    assert page.locator(".tree-node .node-label").first.inner_text() == "source"
    rows = page.locator("table.series tbody tr")
    assert rows.count() == len(run.series) >= 2
    assert rows.last.locator("td").last.inner_text() == f"{run.best_speedup:.3f}×"
    assert page.locator("#run-chart").get_attribute("data-points") == str(len(run.series))
    assert axe_violations(page) == []
