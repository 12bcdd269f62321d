"""The exports pages through Django's test client: roles, the form → create_export, progress, card, files."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.models import Export, ReviewStatus, RunStatus, Step
from curation.services import exports
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step, user

pytestmark = pytest.mark.django_db

FORM = {"name": "web-export", "include": "approved", "policy": "", "train": "0.5", "validation": "0",
        "test": "0.5", "formats": ["messages", "parquet"], "seed": "3", "max_length": "8192",
        "licence": "apache-2.0"}


@pytest.fixture
def approved(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    step = engine_step(builtin("level1/layer_norm"))
    Step.objects.filter(pk=step.pk).update(review_status=ReviewStatus.APPROVED)
    return step


def logged_in(client, name: str, role: Role):
    client.force_login(user(name, role))
    return client


def test_anonymous_visitors_are_sent_to_login(client):
    response = client.get(reverse("exports"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_viewers_see_the_list_but_no_form_and_cannot_post(client, approved):
    logged_in(client, "vera", Role.VIEWER)
    page = client.get(reverse("exports"))
    assert page.status_code == 200 and b"No exports yet." in page.content
    assert b"Create export" not in page.content
    assert client.post(reverse("exports"), FORM).status_code == 403
    assert not Export.objects.exists()


def test_curators_create_an_export_with_the_chosen_options(client, approved):
    logged_in(client, "cato", Role.CURATOR)
    form = client.get(reverse("exports"))
    assert b"Create export" in form.content and b"level1/layer_norm" in form.content  # workload choices
    response = client.post(reverse("exports"), {**FORM, "exactness": ["E"], "levels": [approved.level]})
    export = Export.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("export", args=[export.pk])
    assert export.status == RunStatus.QUEUED and export.created_by.username == "cato"
    assert export.filters == {"exactness": ["E"], "levels": [approved.level]}
    assert export.split_policy == {"fractions": {"train": 0.5, "test": 0.5}}
    assert export.formats == ["messages", "parquet"] and export.seed == 3
    page = client.get(response["Location"]).content.decode()
    assert f"exactness: E; levels: {approved.level}" in page and "fractions: test 0.5, train 0.5" in page


@pytest.mark.parametrize(("change", "message"), [
    ({"train": "0.7"}, b"must sum to 1"),
    ({"formats": []}, b"This field is required"),
    ({"levels": ["no-such-level"]}, b"Select a valid choice"),
])
def test_bad_options_are_refused_with_a_message(client, approved, change, message):
    logged_in(client, "cato", Role.CURATOR)
    response = client.post(reverse("exports"), {**FORM, **change})
    assert response.status_code == 400 and message in response.content
    assert not Export.objects.exists()


def test_a_queued_export_polls_and_a_done_one_shows_files_and_the_rendered_card(client, approved):
    curator = user("cato", Role.CURATOR)
    client.force_login(curator)
    export = exports.create_export(curator, name="<script>alert(1)</script>", enqueue=False,
                                   split_policy={"fractions": {"train": 1.0}}, formats=["messages"])
    queued = client.get(reverse("export", args=[export.pk]), HTTP_HX_REQUEST="true")
    assert b"<html" not in queued.content and b'hx-trigger="every 1s"' in queued.content
    assert b"Refresh</a>" in queued.content  # the no-JavaScript way to see progress
    exports.run_export(export.pk)
    page = client.get(reverse("export", args=[export.pk]))
    text = page.content.decode()
    assert page.status_code == 200 and "hx-trigger" not in text and "<html" in text
    assert reverse("export-file", args=[export.pk, "messages/train.jsonl"]) in text
    assert "<h2>Strategy distribution</h2>" in text and "<td>loop_unrolling</td>" in text  # Markdown → HTML
    assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "license: apache-2.0" in text  # the YAML header, shown as text


def test_downloads_serve_listed_files_only(client, approved):
    curator = user("cato", Role.CURATOR)
    export = exports.run_export(exports.create_export(curator, name="dl", enqueue=False,
                                                      formats=["messages"],
                                                      split_policy={"fractions": {"train": 1.0}}).pk)
    url = reverse("export-file", args=[export.pk, "messages/train.jsonl"])
    assert client.get(url).status_code == 302  # anonymous: to the login page
    logged_in(client, "vera", Role.VIEWER)
    response = client.get(url)
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    body = b"".join(response.streaming_content)
    assert body == (exports.export_root() / str(export.pk) / "messages" / "train.jsonl").read_bytes()
    assert body.count(b"\n") == 1
    for name in ("../../../etc/passwd", "messages/../README.md/..", "nope.txt", "/etc/passwd"):
        assert client.get(f"/exports/{export.pk}/files/{name}").status_code == 404, name
    assert client.get(reverse("export-file", args=[export.pk + 1, "README.md"])).status_code == 404
