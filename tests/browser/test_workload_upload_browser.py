"""Uploading a workload in Chromium with a real Celery worker on ``generate``: a curator uploads a file, its
page shows it queued, then translated (polled, never reloaded by hand) with its LEIR; Generate steps queues
generation and the page follows it to ``done`` with the steps in the tree. A pasted source that does not
translate ends ``failed`` with its one-line reason. axe finds no serious violation, and the pages do not
overflow at 1400 px."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from curation.models import GenerationStatus, Step, TranslationStatus, Workload
from curation.services.roles import Role
from tests.backend.test_curation_uploads import FAILS, GOOD
from tests.backend.workers import publisher, purge, worker

from .conftest import axe_violations, log_in, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


def _upload_form(page):
    page.goto("/workloads/")
    assert page.evaluate(NO_OVERFLOW)
    return page.locator("#upload-form")


def test_upload_translate_and_generate_steps_on_the_page(page, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    make_user("cato", Role.CURATOR)
    broker = django_settings.CELERY_BROKER_URL
    purge(publisher(broker), "generate")
    source = tmp_path / "relu2.py"
    source.write_text(GOOD, encoding="utf-8")
    log_in(page, "cato")
    form = _upload_form(page)
    assert axe_violations(page) == []
    form.get_by_label("Name", exact=True).fill("mine/relu2")
    form.get_by_label("File (.py)").set_input_files(str(source))
    form.get_by_role("button", name="Upload and translate").click()
    page.wait_for_url("**/workloads/*/")
    workload = Workload.objects.get(name="mine/relu2")
    assert page.locator(".translation-status").inner_text() == "queued"
    assert axe_violations(page) == []
    with worker(broker, queues="generate"):
        page.locator(".translation-status.status-translated").wait_for(timeout=180_000)
        assert page.locator("#source-leir").is_visible()  # the page reloaded itself with the LEIR
        page.get_by_role("button", name="Generate steps").click()
        page.locator(".generation-status").wait_for()
        page.locator(".generation-status.status-done").wait_for(timeout=300_000)
        workload.refresh_from_db()
        assert workload.translation_status == TranslationStatus.TRANSLATED
        assert workload.generation_status == GenerationStatus.DONE, workload.generation_message
        steps = Step.objects.filter(workload=workload).count()
        assert steps >= 1
        assert page.locator(".step-count").inner_text() == f"{steps} step{'s' if steps != 1 else ''}"
        assert page.locator("#state-tree .edge-link").count() >= 1
        assert page.evaluate(NO_OVERFLOW)
        assert axe_violations(page) == []

        form = _upload_form(page)
        form.get_by_label("Name", exact=True).fill("mine/broken")
        form.get_by_label("Or paste the source").fill(FAILS)
        form.get_by_role("button", name="Upload and translate").click()
        page.wait_for_url("**/workloads/*/")
        page.locator(".translation-status.status-failed").wait_for(timeout=180_000)
    alert = page.locator(".translation-error").inner_text()
    assert alert.startswith("The source did not translate:") and "frobnicate" in alert
    assert "\n" not in alert and "Generate steps" not in page.content()
    assert page.evaluate(NO_OVERFLOW)
    assert axe_violations(page) == []


def test_the_same_name_twice_is_refused_on_the_form(page, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    make_user("cato", Role.CURATOR)
    purge(publisher(django_settings.CELERY_BROKER_URL), "generate")
    log_in(page, "cato")
    for _ in range(2):
        form = _upload_form(page)
        form.get_by_label("Name", exact=True).fill("mine/twice")
        form.get_by_label("Or paste the source").fill(GOOD)
        form.get_by_role("button", name="Upload and translate").click()
        page.wait_for_load_state()
    assert page.get_by_role("alert").filter(has_text="exists already").inner_text() == (
        "a workload named 'mine/twice' exists already; choose another name")
    assert page.get_by_label("Or paste the source").input_value() == GOOD  # what was typed is kept
    assert Workload.objects.filter(name="mine/twice").count() == 1
    assert axe_violations(page) == []
    purge(publisher(django_settings.CELERY_BROKER_URL), "generate")
