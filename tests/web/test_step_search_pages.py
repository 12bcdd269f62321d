"""Steps search (server side): filters and text narrow the results, URLs stay clean, htmx gets a fragment."""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django.asserts import assertRedirects

from curation.models import Step
from curation.services.roles import Role
from tests.backend.fixtures import user
from tests.web.seed import seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    return seed()


@pytest.fixture
def client():
    client = Client()
    client.force_login(user("vera", Role.VIEWER))
    return client


def names(seeded, response) -> set[str]:
    by_pk = {step.pk: name for name, step in seeded.steps.items()}
    return {by_pk[s.pk] for s in response.context["search"].page.object_list}


def test_every_filter_narrows_the_results(seeded, client):
    assert names(seeded, client.get("/steps/")) == set(seeded.steps)
    assert names(seeded, client.get("/steps/", {"strategy": "loop_tiling"})) == {"tile_ab", "tile_c"}
    assert names(seeded, client.get("/steps/", {"level": "graph"})) == {"fuse_1", "fuse_2"}
    assert names(seeded, client.get("/steps/", {"workload": "level2/gemm_gelu",
                                                "review_status": "approved"})) == {"fuse_1"}
    assert names(seeded, client.get("/steps/", {"verification_status": "fail"})) == {"tile_c"}
    assert names(seeded, client.get("/steps/", {"q": "gelu consumer"})) == {"fuse_1"}
    assert names(seeded, client.get("/steps/", {"depth": "2"})) == {"tile_ab"}


def test_the_form_shows_the_urls_filters(seeded, client):
    html = client.get("/steps/", {"strategy": "loop_tiling", "q": "footprint"}).content.decode()
    assert '<option value="loop_tiling" selected>' in html
    assert 'value="footprint"' in html
    assert "Steps 1–2 of those whose trace matches." in html  # a text search is not counted
    assert "2 steps match" in client.get("/steps/", {"strategy": "loop_tiling"}).content.decode()


def test_empty_fields_of_a_submitted_form_redirect_to_the_clean_shareable_url(seeded, client):
    response = client.get("/steps/?q=&strategy=loop_tiling&level=&workload=&page=")
    assertRedirects(response, "/steps/?strategy=loop_tiling", fetch_redirect_response=False)


def test_htmx_gets_only_the_results_and_the_url_to_push(seeded, client):
    response = client.get("/steps/", {"strategy": "loop_tiling", "level": ""}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and 'id="step-table"' in html
    assert response["HX-Push-Url"] == "/steps/?strategy=loop_tiling"
    assert html.count("<tr data-step=") == 2


def test_a_malformed_filter_is_a_clear_400(seeded, client):
    response = client.get("/steps/", {"depth": "deep"})
    assert response.status_code == 400
    assert "depth takes integers, got &#x27;deep&#x27;" in response.content.decode()


def test_pages_of_fifty_keep_the_filters_in_their_links(seeded, client):
    base = seeded.steps["tile_c"]
    Step.objects.bulk_create([Step(step_id=f"more-{i:03d}", workload=base.workload, before=base.before,
                                   after=base.after, strategy="loop_split", number=9, level="loop",
                                   exactness="E", trace={}, trace_text="x", site={}) for i in range(60)])
    first = client.get("/steps/", {"strategy": "loop_split"})
    assert first.context["search"].count == 60 and len(first.context["search"].page.object_list) == 50
    assert 'href="?strategy=loop_split&amp;page=2"' in first.content.decode()
    second = client.get("/steps/", {"strategy": "loop_split", "page": "2"})
    assert len(second.context["search"].page.object_list) == 10
    assert {s.step_id for s in second.context["search"].page.object_list} == {f"more-{i:03d}" for i in range(10)}


def test_a_text_search_pages_by_reading_one_row_past_the_page(seeded, client):
    base = seeded.steps["tile_c"]
    Step.objects.bulk_create([Step(step_id=f"hit-{i:03d}", workload=base.workload, before=base.before,
                                   after=base.after, strategy="loop_split", number=9, level="loop",
                                   exactness="E", trace={}, trace_text="zebra stripes", site={})
                              for i in range(51)])
    first = client.get("/steps/", {"q": "zebra"})
    search = first.context["search"]
    assert search.count is None and search.page.has_next and len(search.page.object_list) == 50
    assert "(more on the next page)" in first.content.decode()
    second = client.get("/steps/", {"q": "zebra", "page": "2"}).context["search"].page
    assert [s.step_id for s in second.object_list] == ["hit-000"] and not second.has_next
    assert second.start_index() == 51 and second.end_index() == 51


def test_step_links_point_at_the_step_page(seeded, client):
    html = client.get("/steps/", {"strategy": "operator_fusion"}).content.decode()
    for name in ("fuse_1", "fuse_2"):
        assert f'href="/steps/{seeded.steps[name].pk}/"' in html


def test_a_text_search_shows_an_escaped_excerpt_with_the_query_marked(seeded, client):
    html = client.get("/steps/", {"q": "gelu consumer"}).content.decode()
    row = html[html.index(f'<tr data-step="{seeded.steps["fuse_1"].pk}"'):]
    row = row[:row.index("</tr>")]
    assert 'class="match-snippet"' in row
    assert "fusing the producer into the <mark>gelu</mark> <mark>consumer</mark> saves bytes" in row
    Step.objects.filter(pk=seeded.steps["tile_c"].pk).update(
        trace_text="Tiling keeps the <img src=x onerror=alert(1)> footprint contiguous")
    html = client.get("/steps/", {"q": "footprint", "strategy": "loop_tiling"}).content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt; <mark>footprint</mark>" in html
    assert "<img src=x" not in html
    assert 'class="match-snippet"' not in client.get("/steps/", {"strategy": "loop_tiling"}).content.decode()
