"""Dashboard, workloads and steps search in Chromium: seeded figures, tree navigation, live filters, axe."""

from __future__ import annotations

import re

import pytest

from curation.services.roles import Role
from tests.web.seed import seed

from .conftest import axe_violations, log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def seeded():
    data = seed()
    make_user("vera", Role.VIEWER)
    return data


def test_dashboard_shows_the_seeded_counts_heat_map_and_charts(seeded, page):
    log_in(page, "vera")
    page.goto("/")
    assert page.locator('#verification-counts td[data-status="equal_pass"]').inner_text() == "3"
    assert page.locator('#review-counts td[data-status="disputed"]').inner_text() == "1"
    fusion = page.locator('#heat-1 tr[data-strategy="operator_fusion"] td.cell')
    assert fusion.all_inner_texts() == ["0", "2"]
    assert page.locator('#heat-2 tr[data-strategy="operator_fusion"] td.cell').all_inner_texts() == ["0", "1"]
    # the fuller cell is darker than the empty one
    styles = [fusion.nth(i).evaluate("e => getComputedStyle(e).backgroundColor") for i in (0, 1)]
    assert styles[0] == "rgb(255, 255, 255)" and styles[1] != styles[0]
    page.wait_for_selector("html[data-charts=drawn]")
    width = page.locator("#chart-verification").evaluate("c => c.width")
    assert width > 100  # Chart.js sized and drew the canvas
    violations = axe_violations(page)
    assert violations == [], violations
    page.get_by_role("link", name="1 step").click()
    page.wait_for_url(re.compile(r"/steps/\?strategy=operator_fusion&disagreement=1$"))
    assert page.locator("#step-table tbody tr").count() == 1


def test_workload_tree_navigates_to_a_step(seeded, page):
    log_in(page, "vera")
    page.goto("/workloads/")
    page.get_by_role("link", name="level1/layer_norm").click()
    page.wait_for_selector(".math[data-rendered=katex] .katex")
    assert page.locator("code.language-python.hljs").count() == 1  # highlighted
    violations = axe_violations(page)
    assert violations == [], violations
    cycle = seeded.steps["cycle"]
    link = page.locator(f'a.edge-link[href="/steps/{cycle.pk}/"]')
    assert not link.is_visible()  # depth 3: inside a collapsed subtree
    tile_ab = page.locator("#state-tree li", has=page.locator(
        f'> .edge a[href="/steps/{seeded.steps["tile_ab"].pk}/"]'))
    tile_ab.locator("> details > summary").click()
    assert link.is_visible()
    link.click()
    page.wait_for_url(f"**/steps/{cycle.pk}/")


def test_filters_change_the_url_and_the_results(seeded, page):
    log_in(page, "vera")
    page.goto("/steps/")
    assert page.locator("#step-table tbody tr").count() == 6
    violations = axe_violations(page)
    assert violations == [], violations
    page.get_by_label("Strategy").select_option("loop_tiling")
    page.wait_for_url("**/steps/?strategy=loop_tiling")
    assert page.locator("#step-table tbody tr").count() == 2
    page.get_by_label("Text in traces").fill("tile_ab")
    page.wait_for_url("**/steps/?strategy=loop_tiling&q=tile_ab")
    page.wait_for_function("document.querySelectorAll('#step-table tbody tr').length === 1")
    page.go_back()
    page.wait_for_url("**/steps/?strategy=loop_tiling")
    # the URL is shareable: opened afresh it shows the same results and form
    page.goto("/steps/?strategy=loop_tiling&q=tile_ab")
    assert page.locator("#step-table tbody tr").count() == 1
    assert page.get_by_label("Strategy").input_value() == "loop_tiling"


def test_filters_work_without_javascript(seeded, browser, live_server):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        log_in(page, "vera")
        page.goto("/steps/")
        page.get_by_label("Verification").select_option("fail")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url("**/steps/?verification_status=fail")
        assert page.locator("#step-table tbody tr").count() == 1
    finally:
        context.close()
