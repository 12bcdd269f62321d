"""Exports in Chromium: a curator creates an export, a real Celery worker writes it while the page polls,
the files download and the dataset card is rendered; axe finds no serious or critical violation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from curation.models import Export, ReviewStatus, Step
from curation.services import exports
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step
from tests.backend.workers import publisher, purge, worker

from .conftest import axe_violations, log_in, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def approved(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    steps = []
    for name in ("level1/layer_norm", "level1/conv2d"):
        step = engine_step(builtin(name))
        Step.objects.filter(pk=step.pk).update(review_status=ReviewStatus.APPROVED)
        steps.append(step)
    return steps


def test_create_an_export_watch_it_finish_download_it_and_read_the_card(page, approved, tmp_path):
    make_user("cato", Role.CURATOR)
    broker = django_settings.CELERY_BROKER_URL
    purge(publisher(broker), "export")
    log_in(page, "cato")
    page.goto("/exports/")
    assert axe_violations(page) == []
    page.get_by_label("Name").fill("browser-export")
    page.get_by_label("train").fill("1")
    page.get_by_label("validation").fill("0")
    page.get_by_label("test", exact=True).fill("0")
    page.get_by_role("button", name="Create export").click()
    page.wait_for_url("**/exports/*/")
    export = Export.objects.get()
    assert page.get_by_role("heading", name=f"Export #{export.pk}: browser-export").is_visible()
    assert page.locator("#export-status .run-status").inner_text() == "queued"
    with worker(broker, queues="export"):
        page.locator("#export-status .status-done").wait_for(timeout=180_000)  # htmx polling, no reload
    assert page.get_by_role("heading", name="Dataset card").is_visible()
    card = page.get_by_role("article", name="Dataset card")
    assert card.get_by_role("heading", name="browser-export", level=1).is_visible()
    assert card.locator("table").count() >= 2  # the split and strategy tables, rendered from Markdown
    assert "2 rows: train 2" in page.locator("table.files caption").inner_text()
    with page.expect_download() as download:
        page.get_by_role("link", name="messages/train.jsonl").click()
    rows = [json.loads(line) for line in Path(download.value.path()).read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and all(r["messages"][-1]["role"] == "assistant" for r in rows)
    with page.expect_download() as manifest:
        page.get_by_role("link", name="manifest.json").click()
    assert json.loads(Path(manifest.value.path()).read_text(encoding="utf-8"))["splits"] == {"train": 2}
    assert axe_violations(page) == []


def test_without_javascript_the_form_posts_and_a_refresh_link_shows_progress(browser, live_server, approved):
    make_user("cato", Role.CURATOR)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        log_in(page, "cato")
        page.goto("/exports/")
        page.get_by_label("Name").fill("no-js")
        page.get_by_role("button", name="Create export").click()
        page.wait_for_url("**/exports/*/")
        export = Export.objects.get()
        assert export.name == "no-js" and export.split_policy == {
            "fractions": {"train": 0.8, "validation": 0.1, "test": 0.1}}
        exports.run_export(export.pk)  # what the worker does; the page does not poll without JavaScript
        assert page.locator("#export-status .run-status").inner_text() == "queued"
        page.get_by_role("link", name="Refresh").click()
        assert page.locator("#export-status .run-status").inner_text() == "done"
        assert page.get_by_role("heading", name="Dataset card").is_visible()
    finally:
        context.close()
