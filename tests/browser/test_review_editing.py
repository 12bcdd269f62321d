"""Editing on the step screen in Chromium, with a real Celery worker process re-verifying the edit.

* edit the trace; type the transformed LEIR into an invalid program and see the positioned error (line,
  column, caret) appear while typing; fix it; save; approval is off while the worker re-verifies; the panel
  refreshes itself to the outcome; approve. The README's screenshot of the review screen is taken here.
* two reviewers in two browser contexts edit the same trace: the second gets the conflict screen with both
  versions, merges them, and neither text is lost.
"""

from __future__ import annotations

import pytest
from django.conf import settings

from curation.models import AuditEvent, Review, Step, VerificationStatus
from curation.services.roles import Role
from curation.views.step_display import pretty_after
from tests.backend.fixtures import builtin, engine_step
from tests.backend.workers import publisher, purge, worker

from .conftest import REPO, log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)
README_SCREENSHOT = REPO / "docs" / "images" / "review-screen.png"


@pytest.fixture
def step() -> Step:
    return engine_step(builtin(), strategy="loop_unrolling", site=0)


def _fill(page, selector: str, text: str) -> None:
    """Replace a textarea's text with key presses for the last character, so htmx sees typing."""
    box = page.locator(selector)
    box.fill(text[:-1])
    box.press("End")
    box.press_sequentially(text[-1])


def test_edit_trace_and_leir_see_the_error_fix_it_reverify_with_a_worker_and_approve(page, step):
    broker = settings.CELERY_BROKER_URL
    purge(publisher(broker), "verify.cpu")
    make_user("rita", Role.REVIEWER)
    log_in(page, "rita")
    page.goto(f"/steps/{step.pk}/")

    page.keyboard.press("t")
    page.locator("#trace-text").fill("Unroll the loop over a: 16 iterations, bitwise the same arithmetic.")
    page.get_by_role("button", name="Save trace").click()
    page.wait_for_url(f"**/steps/{step.pk}/")
    assert "Trace saved." in page.locator(".messages").inner_text()
    assert page.locator("#trace-text").input_value().startswith("Unroll the loop over a")

    original = pretty_after(step)
    lines = original.splitlines()
    broken_line = 5  # "  G^{f32,g}_{tx} = F^{f32,g}_{tx}/1024;" loses its right-hand side's operand
    assert lines[broken_line - 1].endswith("/1024;")
    lines[broken_line - 1] = lines[broken_line - 1].replace("/1024;", "/;")
    page.keyboard.press("e")
    _fill(page, "#leir-text", "\n".join(lines) + "\n")
    problem = page.locator(".leir-problem").first
    problem.wait_for()
    assert f"line {broken_line}, column" in problem.inner_text()
    column = int(problem.get_attribute("data-column"))
    caret = problem.locator("pre.caret").inner_text().splitlines()
    assert caret[0] == lines[broken_line - 1] and caret[1] == " " * (column - 1) + "^"
    assert caret[0][column - 1] == ";"  # the caret is under the token the parser did not expect

    # the fix: a valid, different and equivalent program — the third block's loop over a unrolled too
    fixed = original.replace("L^{16}_{a=0}L^{64}_{c=0}[\n  H", "U^{16}_{a=0}L^{64}_{c=0}[\n  H", 1)
    assert fixed != original
    _fill(page, "#leir-text", fixed)
    page.locator(".leir-ok").wait_for()
    assert page.locator(".leir-problem").count() == 0

    with worker(broker, queues="verify.cpu"):
        page.get_by_role("button", name="Save and re-verify").click()
        page.wait_for_url(f"**/steps/{step.pk}/")
        assert "re-verification queued" in page.locator(".messages").inner_text()
        approve = page.get_by_role("button", name="Approve a")
        step.refresh_from_db()
        if step.verification_status == VerificationStatus.QUEUED:  # the worker may already be done
            assert approve.is_disabled()
        page.locator("#verification-status", has_text="equal pass").wait_for(timeout=240_000)
    assert approve.is_enabled()
    assert page.locator(".verdict dd", has_text="equal_pass").count() == 1
    step.refresh_from_db()
    assert step.verification_status == VerificationStatus.EQUAL_PASS and step.version == 3
    assert step.after.leir != step.before.leir and "U^{16}_{a=0}L^{64}_{c=0}[H" in step.after.leir

    README_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.reload()  # the screen as a reviewer opening this step sees it (no "saved" message)
    page.locator('.math[data-rendered="katex"]').first.wait_for()
    # what varies between runs and machines (the verification's clock time, timings and CPU) is painted
    # over, so the committed image only changes when the screen does
    page.screenshot(path=str(README_SCREENSHOT), full_page=True, animations="disabled", caret="hide",
                    clip={"x": 0, "y": 0, "width": 1400, "height": 1520},
                    mask=[page.locator(".verdict time"), page.locator(".verdict .timings"),
                          page.locator(".verdict .device")],
                    mask_color="#d1d5db")

    page.keyboard.press("a")
    page.wait_for_url("**/review/")
    review = Review.objects.get()
    assert (review.decision, review.step_version) == ("approve", 3)
    fields = set(AuditEvent.objects.filter(step=step).values_list("field", flat=True))
    assert {"trace_text", "after_leir", "verification_status"} <= fields


def test_a_second_context_editing_the_same_trace_gets_the_conflict_screen_and_nothing_is_lost(new_page, step):
    make_user("rita", Role.REVIEWER)
    make_user("sam", Role.REVIEWER)
    rita, sam = new_page(), new_page()
    log_in(rita, "rita")
    log_in(sam, "sam")
    rita.goto(f"/steps/{step.pk}/")
    sam.goto(f"/steps/{step.pk}/")

    rita.locator("#trace-text").fill("Rita's trace: the loop over a is unrolled.")
    rita.get_by_role("button", name="Save trace").click()
    rita.wait_for_url(f"**/steps/{step.pk}/")

    sam.locator("#trace-text").fill("Sam's trace: sixteen copies of the body.")
    sam.get_by_role("button", name="Save trace").click()
    assert sam.get_by_role("heading", name="Edit conflict on the trace").is_visible()
    assert "Rita's trace" in sam.locator("#theirs").inner_text()
    assert sam.locator("#merged").input_value() == "Sam's trace: sixteen copies of the body."
    assert "rita" in sam.get_by_role("alert").inner_text()

    merged = "Rita's trace: the loop over a is unrolled. Sam's trace: sixteen copies of the body."
    sam.locator("#merged").fill(merged)
    sam.get_by_role("button", name="Save this version").click()
    sam.wait_for_url(f"**/steps/{step.pk}/")
    step.refresh_from_db()
    assert step.trace_text == merged and step.version == 3
    history = sam.locator("table.history").inner_text()
    # the history shows each edit as a diff: Rita's sentence added, then Sam's added after it
    assert "+Rita's trace: the loop over a is unrolled." in history
    assert "+Sam's trace: sixteen copies of the body." in history

    # Rita, still on version 2, edits again and this time keeps Sam's merged text: her draft is filed
    rita.locator("#trace-text").fill("Rita's second thoughts.")
    rita.get_by_role("button", name="Save trace").click()
    rita.get_by_role("button", name="Keep the current version").click()
    rita.wait_for_url(f"**/steps/{step.pk}/")
    assert rita.locator("#trace-text").input_value() == merged
    assert "Rita's second thoughts." in rita.locator("table.history").inner_text()
    assert AuditEvent.objects.filter(step=step, field="discarded_draft:trace_text",
                                     old="Rita's second thoughts.").exists()
