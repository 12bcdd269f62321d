"""Dashboard (server side): every figure it shows for a known dataset, and a query count that stays flat."""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django.asserts import assertContains, assertInHTML, assertRedirects

from curation.models import Step
from curation.services import dashboard
from curation.services.roles import Role
from tests.backend.fixtures import user
from tests.web.seed import seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    return seed()


@pytest.fixture
def client_for():
    def make(name: str = "vera", role: Role = Role.VIEWER) -> Client:
        client = Client()
        client.force_login(user(name, role))
        return client

    return make


def test_anonymous_visitor_is_sent_to_login():
    assertRedirects(Client().get("/"), "/accounts/login/?next=/", fetch_redirect_response=False)


def test_status_counts_and_queues(seeded, client_for):
    response = client_for().get("/")
    assert response.status_code == 200
    html = response.content.decode()
    for status, n in {"equal_pass": 3, "pass": 1, "fail": 1, "pending": 1, "queued": 0, "error": 0}.items():
        assertInHTML(f'<td data-status="{status}">{n}</td>', html)
    for status, n in {"unreviewed": 4, "approved": 1, "disputed": 1, "rejected": 0, "in_review": 0}.items():
        assertInHTML(f'<td data-status="{status}">{n}</td>', html)
    assertContains(response, '<strong id="step-total">6</strong>')
    assertContains(response, "2 of 2 translated workloads with steps")
    assertContains(response, "5 of 6 steps verified")


def test_heat_maps_count_verified_and_approved_per_strategy_and_workload_level(seeded):
    board = dashboard.dashboard()
    assert board.verified_heat.columns == [1, 2]

    def row(heat, strategy):
        (found,) = [r for r in heat.rows if r["strategy"] == strategy]
        return [cell["value"] for cell in found["cells"]]

    assert row(board.verified_heat, "loop_unrolling") == [1, 0]
    assert row(board.verified_heat, "loop_tiling") == [1, 0]  # the failed tiling step is not verified
    assert row(board.verified_heat, "operator_fusion") == [0, 2]
    assert row(board.approved_heat, "operator_fusion") == [0, 1]
    assert board.verified_heat.total == 4 and board.approved_heat.total == 1
    # catalogue strategies without steps are rows of zeros: the imbalance shows before an export
    assert row(board.verified_heat, "loop_fusion") == [0, 0]
    assert dashboard.heat_style(0, 5) == "background:#fff"
    assert dashboard.heat_style(5, 5) == "background:hsl(217,90%,60%)"


def test_pass_rates_reviewers_and_agreement_on_the_page(seeded, client_for):
    html = client_for().get("/").content.decode()
    assertInHTML('<td class="num pass-rate">50%</td>', html)  # loop_tiling: 1 pass of 2 finished
    assertInHTML('<td class="num equal-pass-rate">0%</td>', html)
    rates = {r.strategy: r for r in dashboard.dashboard().pass_rates}
    assert rates["loop_reorder"].pass_rate is None and rates["loop_reorder"].waiting == 1
    assert rates["operator_fusion"].equal_pass_rate == 1.0
    ann, bob = dashboard.dashboard().reviewers
    assert (ann.reviewer, ann.steps, ann.approved, ann.open_assigned) == ("ann", 2, 2, 1)
    assert (bob.reviewer, bob.approved, bob.rejected, round(bob.done_fraction, 2)) == ("bob", 1, 1, 1.0)
    assertInHTML('<td class="num kappa">0.00</td>', html)  # one agreement, one disagreement: chance level
    assertInHTML('<a href="/steps/?strategy=operator_fusion&amp;disagreement=1">1 step</a>', html)


def test_disagreement_link_lists_exactly_the_disagreeing_step(seeded, client_for):
    response = client_for().get("/steps/", {"strategy": "operator_fusion", "disagreement": "1"})
    assert [s.pk for s in response.context["search"].page.object_list] == [seeded.steps["fuse_2"].pk]


def test_charts_get_the_same_numbers_as_the_tables(seeded, client_for):
    response = client_for().get("/")
    charts = response.context["charts"]
    assert dict(zip(charts["verification"]["labels"], charts["verification"]["values"], strict=True))[
        "equal pass"] == 3
    assert 'id="dashboard-data"' in response.content.decode()
    assert "vendor/chart.umd.min.js" in response.content.decode()


def test_query_count_does_not_grow_with_the_steps(seeded, client_for):
    client = client_for()
    client.get("/")  # sessions, groups: warm

    def count() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            assert client.get("/").status_code == 200
        return len(queries)

    before = count()
    base = seeded.steps["tile_c"]
    Step.objects.bulk_create([Step(step_id=f"more-{i}", workload=base.workload, before=base.before,
                                   after=base.after, strategy="loop_split", number=9, level="loop",
                                   exactness="E", trace={}, trace_text="x", site={}) for i in range(200)])
    assert count() == before <= 20
