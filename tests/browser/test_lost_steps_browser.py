"""Nothing lost, in Chromium with a real worker: a curator clicks Generate steps, the worker (its import
slowed by the test-only pause) is SIGKILLed once the first steps are in the database; the workload page,
polling by itself, shows the generation stalled with a Retry button and the partial step count. A new
worker starts, the curator clicks Retry, and the page ends ``done`` showing as many steps as the generated
file holds — each stored exactly once."""

from __future__ import annotations

import json
import os
import re
import signal

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from curation.models import GenerationStatus, Step, Workload
from curation.services import workers
from curation.services.generation import IMPORT_PAUSE_ENV, REQUEST_DEPTH, generated_path
from curation.services.roles import Role
from tests.backend.fixtures import builtin
from tests.backend.workers import publisher, purge, wait_for, worker

from .conftest import log_in, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEAT = 0.5


def _steps(count: int) -> str:
    return f"{count} step{'s' if count != 1 else ''}"


def test_a_worker_killed_mid_import_stalls_the_page_and_retry_stores_every_step_once(page, settings,
                                                                                       tmp_path):
    settings.VAR_DIR = tmp_path
    settings.STEPTP_HEARTBEAT_SECONDS = BEAT  # the live server runs in this process: it reads the same
    broker = django_settings.CELERY_BROKER_URL
    app = publisher(broker)
    purge(app, "generate")
    workload = builtin("level1/softmax")  # small, translated already; the page's request caps the steps
    path = generated_path(workload, REQUEST_DEPTH, 0)
    make_user("cato", Role.CURATOR)
    log_in(page, "cato")
    page.goto(f"/workloads/{workload.pk}/")
    state = page.locator(".generation-status")
    env = {"STEPTP_HEARTBEAT_SECONDS": str(BEAT), "STEPTP_VAR_DIR": str(tmp_path)}
    try:
        # the import of a dozen records takes a fraction of a second: the test-only pause makes it seconds
        with worker(broker, queues="generate", env={**env, IMPORT_PAUSE_ENV: "0.4"}) as first:
            wait_for(workers.live_workers, 60, "the worker's first heartbeat")
            page.get_by_role("button", name="Generate steps").click()
            state.wait_for()
            wait_for(lambda: Step.objects.filter(workload=workload).exists(), 300, "the import to begin")
            os.killpg(first.pid, signal.SIGKILL)  # mid-import, no clean sign-off
            first.wait(10)
        # the file is complete before its import starts; its records with an after-state are the steps
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        ids = [record["step_id"] for record in records if record.get("child")]
        stored = Step.objects.filter(workload=workload).count()
        assert len(ids) >= 4 and 0 < stored < len(ids), (stored, len(ids))

        # no reload by hand: the page polls, sees the dead worker's state turn stalled and reloads itself
        page.locator(".generation-status", has_text="stalled — worker lost; retry").wait_for(timeout=30_000)
        assert page.locator(".step-count").inner_text() == _steps(stored)  # partial, not counted done
        assert Workload.objects.get(pk=workload.pk).generation_status == GenerationStatus.RUNNING

        with worker(broker, queues="generate", env=env):
            wait_for(workers.live_workers, 60, "the new worker's first heartbeat")
            # a worker started after the task began cannot be the one holding it: still stalled, unless the
            # broker redelivers the dead worker's message by itself (Redis and RabbitMQ may; the embedded
            # filesystem broker does not), in which case the page leaves the stall without Retry
            retry = page.get_by_role("button", name="Retry generating steps")
            if "stalled" in state.inner_text():
                try:
                    retry.click(timeout=10_000)
                except PlaywrightTimeout:  # the redelivered generation moved the page on meanwhile
                    assert "stalled" not in state.inner_text()
            page.locator(".generation-status.status-done").wait_for(timeout=300_000)
        done = Workload.objects.get(pk=workload.pk)
        assert done.generation_status == GenerationStatus.DONE, done.generation_message
        assert page.locator(".step-count").inner_text() == _steps(len(ids))
        # whichever run finished last says so: together the runs stored every step once
        new, there = map(int, re.match(r"(\d+) new steps stored, (\d+) already there",
                                       page.locator(".generation-message").inner_text()).groups())
        assert new + there == len(ids) and there >= stored
        assert page.get_by_role("button", name="Generate steps").is_visible()  # the page is idle again
        assert sorted(Step.objects.filter(workload=workload).values_list("step_id", flat=True)) == sorted(ids)
        assert len(set(ids)) == len(ids)
    finally:
        purge(app, "generate")  # nothing of this test's is left for the next one's worker
