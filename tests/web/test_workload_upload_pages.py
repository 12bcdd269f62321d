"""Uploading on /workloads/ and the workload page's live state, through Django's test client: the form for
curators only, a file or pasted source, refusals with a message, POST/redirect/GET to a page that polls while
the translation is pending, the reload when the state moves on, and the Generate steps button."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from curation.models import GenerationStatus, TranslationStatus, Workload
from curation.services import dispatch, workers
from curation.services.roles import Role
from tests.backend.fixtures import builtin, user
from tests.backend.test_curation_uploads import GOOD
from tests.backend.workers import publisher, purge, take_queued

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker(settings):
    app = publisher(settings.CELERY_BROKER_URL)
    purge(app, "generate")
    return app


def logged_in(client, name: str, role: Role):
    client.force_login(user(name, role))
    return client


def test_viewers_see_why_they_cannot_upload(client, broker):
    logged_in(client, "vera", Role.VIEWER)
    html = client.get(reverse("workloads")).content.decode()
    assert "Uploading a workload needs the curator role; you have viewer." in html
    assert 'id="upload-form"' not in html
    assert client.post(reverse("workloads"), {"name": "x", "source": GOOD}).status_code == 403
    assert not Workload.objects.exists()


def test_a_curator_uploads_a_file_and_lands_on_its_queued_page(client, broker,
                                                               django_capture_on_commit_callbacks):
    logged_in(client, "cato", Role.CURATOR)
    form = client.get(reverse("workloads")).content.decode()
    assert 'enctype="multipart/form-data"' in form and '<textarea name="source"' in form
    upload = SimpleUploadedFile("relu2.py", GOOD.encode(), content_type="text/x-python")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("workloads"), {"name": "mine/relu2", "file": upload, "level": "1",
                                                      "dtype": "f32"})
    workload = Workload.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("workload", args=[workload.pk])
    assert workload.source == GOOD and workload.translation_status == TranslationStatus.QUEUED
    assert workload.created_by.username == "cato"
    assert take_queued(broker, "generate") == [(dispatch.TRANSLATE_UPLOAD, [workload.pk])]
    page = client.get(response["Location"]).content.decode()
    poll = f'hx-get="/workloads/{workload.pk}/state/?shown=queued." hx-trigger="every 1s"'
    assert poll in page and ">queued</strong>" in page and ">Refresh</a>" in page
    assert "No states yet (the source is queued)." in page and "Generate steps" not in page
    listed = client.get(reverse("workloads")).content.decode()
    assert re.search(r"mine/relu2</a> <span class=\"muted\">\(queued\)</span>", listed)


def test_pasted_source_keeps_its_lines(client, broker):
    logged_in(client, "cato", Role.CURATOR)
    response = client.post(reverse("workloads"), {"name": "mine/pasted", "source": GOOD, "level": "2",
                                                  "dtype": "f64"})
    workload = Workload.objects.get(name="mine/pasted")
    assert response.status_code == 302 and (workload.source, workload.level, workload.dtype) == (GOOD, 2, "f64")


@pytest.mark.parametrize(("data", "message"), [
    ({"source": ""}, "choose a .py file or paste its source"),
    ({"source": GOOD, "file": ("relu2.py", GOOD)}, "give a file or paste the source, not both"),
    ({"file": ("relu2.txt", GOOD)}, "relu2.txt is not a .py file"),
    ({"file": ("latin.py", "x = 'é'")}, "latin.py is not UTF-8 text"),
    ({"source": "def (:\n"}, "not valid Python: invalid syntax (line 1)"),
    ({"source": "import torch\n"}, "a KernelBench-style file defines class Model and def get_inputs()"),
])
def test_bad_uploads_are_refused_with_a_message(client, broker, data, message):
    logged_in(client, "cato", Role.CURATOR)
    if "file" in data:
        filename, text = data["file"]
        encoding = "latin-1" if filename == "latin.py" else "utf-8"
        data = {**data, "file": SimpleUploadedFile(filename, text.encode(encoding))}
    response = client.post(reverse("workloads"), {"name": "mine/bad", "level": "1", "dtype": "f32", **data})
    assert response.status_code == 400 and message in response.content.decode()
    assert not Workload.objects.exists() and take_queued(broker, "generate") == []


def test_the_same_name_twice_is_refused_clearly(client, broker):
    logged_in(client, "cato", Role.CURATOR)
    form = {"name": "mine/twice", "source": GOOD, "level": "1", "dtype": "f32"}
    assert client.post(reverse("workloads"), form).status_code == 302
    again = client.post(reverse("workloads"), form)
    assert again.status_code == 400
    assert "a workload named &#x27;mine/twice&#x27; exists already; choose another name" in again.content.decode()
    assert Workload.objects.filter(name="mine/twice").count() == 1


def test_the_state_fragment_asks_for_a_reload_only_when_the_state_moved_on(client):
    logged_in(client, "vera", Role.VIEWER)
    workload = Workload.objects.create(name="mine/q", source=GOOD, translation_status="translating")
    workers.beat("w@host", ["generate"])  # a live worker is translating it (with none, it would be stalled)
    url = reverse("workload-state", args=[workload.pk])
    same = client.get(url, {"shown": "translating."}, HTTP_HX_REQUEST="true")
    assert "HX-Refresh" not in same and 'hx-trigger="every 1s"' in same.content.decode()
    workers.forget("w@host")  # the worker died: the page reloads to say it stalled and offer the retry
    stalled = client.get(url, {"shown": "translating."}, HTTP_HX_REQUEST="true")
    assert stalled["HX-Refresh"] == "true" and ">stalled — worker lost; retry</strong>" in stalled.content.decode()
    Workload.objects.filter(pk=workload.pk).update(translation_status="failed", translation_error="error: nope")
    moved = client.get(url, {"shown": "translating."}, HTTP_HX_REQUEST="true")
    html = moved.content.decode()
    assert moved["HX-Refresh"] == "true" and "hx-get" not in html
    assert '<p class="error translation-error" role="alert">The source did not translate: error: nope</p>' in html


def test_generate_steps_is_offered_to_curators_on_a_translated_workload(client, broker, settings, tmp_path,
                                                                        django_capture_on_commit_callbacks):
    settings.VAR_DIR = tmp_path
    workload = builtin("level1/relu")
    page = reverse("workload", args=[workload.pk])
    logged_in(client, "vera", Role.VIEWER)
    viewer_html = client.get(page).content.decode()
    assert "Generating steps needs the curator role; you have viewer." in viewer_html
    assert "hx-get" not in viewer_html  # nothing pending: no polling
    assert client.post(reverse("generate-steps", args=[workload.pk])).status_code == 403
    logged_in(client, "cato", Role.CURATOR)
    assert ">Generate steps</button>" in client.get(page).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("generate-steps", args=[workload.pk]), follow=True)
    html = response.content.decode()
    assert response.redirect_chain == [(page, 302)] and f"Generation for {workload.name} is queued." in html
    assert ">queued</strong>" in html and ">Generate steps</button>" not in html
    assert '?shown=translated.queued" hx-trigger="every 1s"' in html
    workload.refresh_from_db()
    assert workload.generation_status == GenerationStatus.QUEUED
    assert take_queued(broker, "generate") == [(dispatch.GENERATE_STEPS, [workload.pk, 1, 0, 12])]
    again = client.post(reverse("generate-steps", args=[workload.pk]), follow=True).content.decode()
    assert "generation for level1/relu is already queued or running" in again
    assert take_queued(broker, "generate") == []
