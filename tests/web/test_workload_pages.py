"""Workload pages (server side): the list's figures, the source and LEIR, the state tree and its caps."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils.html import escape
from pytest_django.asserts import assertContains, assertInHTML

from curation.models import ProgramState
from curation.services.roles import Role
from curation.services.state_tree import StateNotInWorkload, state_tree
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


def test_list_shows_each_workloads_figures_and_filters_by_level(seeded, client):
    html = client.get("/workloads/").content.decode()
    row = re.search(r'<tr data-workload="level1/layer_norm">(.*?)</tr>', html, re.S).group(1)
    cells = re.findall(r'<td class="num">(.*?)</td>', row, re.S)
    # states: source, a, b, c; steps 4; verified: unroll + tile_ab; approved 0; best ×2.50
    assert [re.sub(r"<[^>]+>", "", c).strip() for c in cells] == ["4", "4", "2", "0", "×2.50"]
    level2 = client.get("/workloads/", {"level": "2"}).content.decode()
    assert "level2/gemm_gelu" in level2 and "level1/layer_norm" not in level2
    bad = client.get("/workloads/", {"level": "two"})
    assert bad.status_code == 400 and "level takes a number" in bad.content.decode()


def test_detail_shows_source_highlighted_and_leir_raw_and_as_math(seeded, client):
    from leir.latex import program_latex
    from leir.printer import pretty
    from leir.program import program_from_json

    response = client.get(f"/workloads/{seeded.workload.pk}/")
    html = response.content.decode()
    assert '<code class="language-python">' in html and "class Model" in html
    blocks = program_latex(program_from_json(seeded.source.as_program_json()))
    assert html.count("data-math") == len(blocks) >= 1
    assertContains(response, 'id="source-leir"')
    text = pretty(program_from_json(seeded.source.as_program_json()))
    assert response.context["leir"].pretty == text and escape(text.splitlines()[0]) in html


def test_tree_shows_each_step_once_with_links_badges_and_best_speedup(seeded, client):
    html = client.get(f"/workloads/{seeded.workload.pk}/").content.decode()
    for name in ("unroll", "tile_ab", "tile_c", "cycle"):
        assert html.count(f'href="/steps/{seeded.steps[name].pk}/"') == 1, name
    assertInHTML('<span class="vbadge vbadge-fail">fail</span>', html)
    # the cycle b → a points back to a instead of expanding it again
    a = seeded.steps["unroll"].after
    assert html.count(f'id="state-{a.pk}"') == 1
    assertInHTML(f'<a class="seen" href="#state-{a.pk}">(expanded elsewhere in the tree)</a>', html)
    tree = state_tree(seeded.workload)
    first = tree.rows[0]
    assert first.step["strategy"] == "loop_unrolling" and first.best == 2.5 and tree.best == 2.5
    assert [r.depth for r in tree.rows] == [1, 2, 3, 1]


def test_caps_cut_the_tree_and_offer_the_state_as_root(seeded, client):
    tree = state_tree(seeded.workload, max_depth=1)
    (cut,) = [r for r in tree.rows if r.cut]
    assert cut.state_pk == seeded.steps["unroll"].after_id and cut.hidden == 1
    narrow = state_tree(seeded.workload, max_children=1)
    assert narrow.root_hidden == 1 and narrow.truncated
    rerooted = client.get(f"/workloads/{seeded.workload.pk}/", {"root": cut.state_pk})
    assert [r.step["strategy"] for r in rerooted.context["tree"].rows] == ["loop_tiling", "loop_reorder"]


def test_the_row_budget_fills_the_shallow_levels_first(seeded):
    tree = state_tree(seeded.workload, max_rows=2)
    unroll, tile_c = tree.rows
    assert (unroll.step["pk"], tile_c.step["pk"]) == (seeded.steps["unroll"].pk, seeded.steps["tile_c"].pk)
    assert unroll.cut and unroll.hidden == 1 and not unroll.has_children  # a's step waits behind a cut
    assert tree.truncated


def test_a_root_from_another_workload_is_refused(seeded, client):
    foreign = ProgramState.objects.filter(workload=seeded.other).first()
    with pytest.raises(StateNotInWorkload):
        state_tree(seeded.workload, foreign)
    assert client.get(f"/workloads/{seeded.workload.pk}/", {"root": foreign.pk}).status_code == 404
    assert client.get(f"/workloads/{seeded.workload.pk}/", {"root": "x"}).status_code == 404
    assert client.get("/workloads/999999/").status_code == 404
