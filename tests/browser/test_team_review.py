"""A team of one, a curator who settles, a disabled Approve that says why, and pages that fit 1,400 px.

Issue 41 items 4, 5 and the layout fix of item 7, in Chromium against the live server.
"""

from __future__ import annotations

import pytest

from curation.models import Review, ReviewStatus, VerificationStatus
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step

from .conftest import log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)

NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


def test_a_team_of_one_approves_with_one_review(page, settings):
    settings.STEPTP_REVIEWS_REQUIRED = 1
    step = engine_step(builtin(), strategy="loop_unrolling", site=0)
    make_user("solo", Role.REVIEWER)
    log_in(page, "solo")
    page.goto("/")
    assert "Approval needs 1 agreeing review per step" in page.locator("#review-policy").inner_text()
    page.goto(f"/steps/{step.pk}/")
    page.keyboard.press("a")
    page.wait_for_url(lambda url: f"/steps/{step.pk}/" not in url)
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.APPROVED


def test_with_two_required_a_curator_settles_a_step_with_one_decision(page):
    step = engine_step(builtin(), strategy="loop_unrolling", site=0)
    make_user("cora", Role.CURATOR)
    log_in(page, "cora")
    page.goto("/")
    assert "Approval needs 2 agreeing reviews per step" in page.locator("#review-policy").inner_text()
    page.goto(f"/steps/{step.pk}/")
    page.get_by_role("button", name="Approve and settle").click()
    page.wait_for_url(lambda url: f"/steps/{step.pk}/" not in url)
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.APPROVED
    assert Review.objects.get(step=step).adjudication is True


def test_a_disabled_approve_looks_disabled_and_the_key_says_why(page):
    workload = builtin()
    waiting = engine_step(workload, strategy="loop_unrolling", site=0, verified=VerificationStatus.FAIL)
    ready = engine_step(workload, strategy="loop_unrolling", site=1)
    make_user("rita", Role.REVIEWER)
    log_in(page, "rita")
    page.goto(f"/steps/{ready.pk}/")
    enabled = page.locator("#approve").evaluate("b => getComputedStyle(b).backgroundColor")
    page.goto(f"/steps/{waiting.pk}/")
    approve = page.locator("#approve")
    assert approve.is_disabled()
    disabled = approve.evaluate("b => getComputedStyle(b).backgroundColor")
    assert disabled != enabled, "a disabled Approve must not look like an enabled one"
    why = page.locator("#approve-why")
    assert why.get_attribute("role") is None
    page.keyboard.press("a")
    assert why.get_attribute("role") == "alert"
    assert "why-flash" in why.get_attribute("class")
    assert "Approval needs" in why.inner_text()
    assert not Review.objects.filter(step=waiting).exists()


def test_step_steps_and_queue_pages_have_no_horizontal_overflow_at_1400px(page):
    wide = engine_step(builtin("level1/logsigmoid_mix"), strategy="operator_fusion", site=0)  # long formulas
    make_user("rita", Role.REVIEWER)
    log_in(page, "rita")
    assert page.viewport_size["width"] == 1400
    page.goto(f"/steps/{wide.pk}/")
    page.locator("details[open] .math[data-rendered]").first.wait_for(state="attached")
    assert page.evaluate(NO_OVERFLOW), "the step page scrolls sideways"
    tracks = page.evaluate("[...document.querySelectorAll('details[open] > .math-pair')]"
                           ".map(g => g.scrollWidth - g.clientWidth)")
    assert tracks and max(tracks) <= 1, f"a math pair is wider than its panel: {tracks}"
    for url in ("/steps/", "/review/"):
        page.goto(url)
        assert page.evaluate(NO_OVERFLOW), f"{url} scrolls sideways"
