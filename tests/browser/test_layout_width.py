"""Pages fit a 1,400 px window: no sideways scrolling on the step, steps and queue pages, axe still clean.

Issue 41 item 7. The step page carries a very wide formula (a statement of 150 terms), a history with
diffs and a long unbroken token in its trace; the steps page shows a search excerpt of that trace. The
step page's check is shown to be able to fail: with the math pair's tracks as plain ``1fr`` (which will
not shrink below their widest formula) the same page scrolls sideways.
"""

from __future__ import annotations

import pytest

from curation.models import Step
from curation.services import edits
from curation.services.roles import Role
from curation.services.workloads import store_state
from tests.backend.fixtures import builtin, engine_step

from .conftest import axe_violations, log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)

#: Fits when nothing is wider than the viewport's content box (clientWidth leaves the scrollbar out).
FITS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
LONG_TOKEN = "footprint_" + "x" * 300


def _wide_step(reviewer) -> Step:
    """A real step whose after-state's first statement is 150 terms long, with an edited trace."""
    step = engine_step(builtin(), strategy="loop_unrolling", site=0)
    program = step.after.as_program_json()
    wide = dict(program, leir=program["leir"].replace(";", "+" + "+".join(["0.5"] * 150) + ";", 1))
    after, _ = store_state(step.workload, wide, parent=step.before, depth=1)
    Step.objects.filter(pk=step.pk).update(after=after)
    step.refresh_from_db()
    edits.edit_trace(reviewer, step, expected_version=1,
                     trace_text=f"{step.trace_text} The {LONG_TOKEN} stays contiguous.")
    return step


def _fits(page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert page.evaluate(FITS), f"{url} scrolls sideways: {widths}"
    assert axe_violations(page) == [], url


def test_step_steps_and_queue_pages_fit_1400px_with_wide_formulas_and_long_words(page):
    reviewer = make_user("rita", Role.REVIEWER)
    step = _wide_step(reviewer)
    log_in(page, "rita")
    assert page.viewport_size["width"] == 1400

    _fits(page, f"/steps/{step.pk}/")
    page.locator("details[open] .math[data-rendered]").first.wait_for(state="attached")
    assert page.evaluate(FITS)
    widest = page.evaluate("Math.max(...[...document.querySelectorAll('.math')].map(m => m.scrollWidth))")
    assert widest > 700, f"the formula is not wide enough to test anything: {widest}px"
    assert "diff-add" in page.locator("table.history").inner_html()

    # the check can fail: tracks that do not shrink below their formula push the page sideways
    page.add_style_tag(content=".math-pair { grid-template-columns: 1fr 1fr !important; }")
    assert not page.evaluate(FITS), "plain 1fr tracks should overflow with this formula"

    _fits(page, "/steps/?q=footprint")
    assert page.locator(".match-snippet mark").count() >= 1
    _fits(page, "/review/")
