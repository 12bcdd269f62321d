"""The queue and the step screen in Chromium: a review done with the keyboard only, and accessibility.

The keys are the ones shown on screen (``<kbd>``): n next step, a approve, r reason (then Tab to Reject),
s skip, u undo. axe-core must find no serious or critical violation on the queue and the step page.
"""

from __future__ import annotations

import pytest

from curation.models import Review, ReviewStatus
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step

from .conftest import axe_violations, log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def steps():
    workload = builtin()
    return [engine_step(workload, strategy="loop_unrolling", site=0),
            engine_step(workload, strategy="loop_unrolling", site=1)]


def test_review_two_steps_with_the_keyboard_only_and_undo(page, steps):
    make_user("rita", Role.REVIEWER)
    log_in(page, "rita")
    page.goto("/review/")
    assert page.locator("#queue-count").inner_text() == "2"
    assert page.locator("kbd", has_text="n").first.is_visible()

    page.keyboard.press("n")
    page.wait_for_url(f"**/steps/{steps[0].pk}/")
    assert page.get_by_role("button", name="Approve a").is_enabled()
    page.keyboard.press("a")
    page.wait_for_url(f"**/steps/{steps[1].pk}/")
    assert "Approved step" in page.locator(".messages").inner_text()

    page.keyboard.press("r")  # focuses the reason list; choose with the arrows, Tab to Reject, Enter
    assert page.evaluate("document.activeElement.id") == "reject-reason"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    page.keyboard.type("shortcut")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "reject"
    page.keyboard.press("Enter")
    page.wait_for_url("**/review/")
    assert page.locator("#queue-count").inner_text() == "0"

    decisions = list(Review.objects.order_by("id").values_list("step_id", "decision", "reason", "comment"))
    assert decisions == [(steps[0].pk, "approve", "", ""),
                         (steps[1].pk, "reject", "trace_not_grounded", "shortcut")]

    page.keyboard.press("u")
    page.wait_for_url(f"**/steps/{steps[1].pk}/")
    assert "Undid your reject" in page.locator(".messages").inner_text()
    assert list(Review.objects.values_list("step_id", flat=True)) == [steps[0].pk]
    page.keyboard.press("s")
    page.wait_for_url("**/review/")
    assert Review.objects.get(step=steps[1]).decision == "skip"
    steps[0].refresh_from_db()
    assert steps[0].review_status == ReviewStatus.IN_REVIEW  # one of the two reviews the policy needs


def test_queue_and_step_pages_have_no_serious_accessibility_violation(page, steps):
    make_user("rita", Role.REVIEWER)
    log_in(page, "rita")
    page.goto("/review/")
    assert axe_violations(page) == []
    page.goto(f"/steps/{steps[0].pk}/")
    page.locator('.math[data-rendered="katex"]').first.wait_for()  # the blocks typeset by KaTeX
    page.locator("#leir-text").fill("B^{4}_{tx=0}[\n  oops\n];\n")
    page.locator(".leir-problem").first.wait_for()
    assert axe_violations(page) == []


def test_a_viewer_sees_no_review_action(page, steps):
    make_user("vera", Role.VIEWER)
    log_in(page, "vera")
    page.goto(f"/steps/{steps[0].pk}/")
    assert page.get_by_role("heading", name="Before → after").is_visible()
    assert page.get_by_role("button", name="Approve a").count() == 0
    assert page.locator("#leir-text").count() == 0
    page.keyboard.press("a")
    assert not Review.objects.exists()
