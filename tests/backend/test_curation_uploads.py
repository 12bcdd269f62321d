"""Uploads translate on a queue: checked at once, stored ``queued``, translated by the ``generate`` worker's
task into ``translated`` or ``failed`` (one short line, never a traceback, never an exception out of the
task); the API answers 202 with a status URL, never 201 for a failure; "generate steps" queues generation
once and records how it went.

The queued messages are the real ones on the test broker; ``run_queued`` runs their task here, as a worker
would, and the translation runs in the real sandbox.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from curation.models import GenerationStatus, Step, TranslationStatus, Workload
from curation.services import dispatch, generation, uploads
from curation.services.roles import PermissionDenied, Role

from .fixtures import builtin, user
from .workers import publisher, purge, run_queued, take_queued

pytestmark = pytest.mark.django_db

GOOD = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
'''
#: Valid Python with a Model the tracer cannot follow: only the sandboxed translation finds that out.
FAILS = GOOD.replace("torch.relu(x) * 2.0", "torch.frobnicate(x)")


@pytest.fixture
def broker(settings):
    app = publisher(settings.CELERY_BROKER_URL)
    purge(app, "generate")
    return app


@pytest.fixture
def cato():
    return user("cato", Role.CURATOR)


def _submit(cato, django_capture_on_commit_callbacks, name="mine/relu2", source=GOOD) -> Workload:
    with django_capture_on_commit_callbacks(execute=True):
        return uploads.submit_upload(cato, name=name, source=source)


@pytest.mark.parametrize(("source", "why"), [
    ("", "the source is empty"),
    ("class Model(:\n", "not valid Python: invalid syntax (line 1)"),
    ("import torch\n", "defines class Model and def get_inputs() at the top level"),
    ("class Model:\n    pass\n", "defines def get_inputs() at the top level"),
    ("x" * (uploads.MAX_SOURCE_BYTES + 1), "the source is over 256 KiB"),
])
def test_a_source_that_cannot_be_a_workload_is_refused_at_once(cato, broker, source, why):
    with pytest.raises(uploads.UploadRefused) as refused:
        uploads.submit_upload(cato, name="mine/bad", source=source)
    assert why in str(refused.value)
    assert not Workload.objects.exists()


def test_names_are_checked_and_never_replace_a_workload(cato, broker, django_capture_on_commit_callbacks):
    first = _submit(cato, django_capture_on_commit_callbacks)
    with pytest.raises(uploads.NameTaken, match="a workload named 'mine/relu2' exists already"):
        uploads.submit_upload(cato, name=" mine/relu2 ", source=FAILS)
    for bad in ("", "../etc", "a b", "x" * 201):
        with pytest.raises(uploads.UploadRefused, match="a name is letters, digits"):
            uploads.submit_upload(cato, name=bad, source=GOOD)
    assert list(Workload.objects.values_list("pk", "source")) == [(first.pk, GOOD)]
    with pytest.raises(PermissionDenied):
        uploads.submit_upload(user("vera", Role.REVIEWER), name="mine/other", source=GOOD)


@pytest.mark.slow  # the real sandbox translates (or generates): 10-30 s
def test_an_upload_is_queued_and_the_worker_translates_it(cato, broker, django_capture_on_commit_callbacks):
    workload = _submit(cato, django_capture_on_commit_callbacks)
    assert workload.translation_status == TranslationStatus.QUEUED and not workload.states.exists()
    assert run_queued(broker, "generate") == [(dispatch.TRANSLATE_UPLOAD, [workload.pk])]
    workload.refresh_from_db()
    assert workload.translation_status == TranslationStatus.TRANSLATED and workload.translation_error == ""
    state = workload.states.get()
    assert state.depth == 0 and len(state.tensors) >= 2
    uploads.translate_upload(workload.pk)  # a redelivered message changes nothing
    assert workload.states.count() == 1


@pytest.mark.slow  # the real sandbox translates (or generates): 10-30 s
def test_a_source_that_does_not_translate_is_a_failed_outcome_with_one_line(
        cato, broker, django_capture_on_commit_callbacks):
    import curation.tasks as tasks

    workload = _submit(cato, django_capture_on_commit_callbacks, name="mine/broken", source=FAILS)
    assert take_queued(broker, "generate") == [(dispatch.TRANSLATE_UPLOAD, [workload.pk])]
    assert tasks.translate_upload.apply(args=[workload.pk], throw=True).get() == "failed"  # not an error
    workload.refresh_from_db()
    assert workload.translation_status == TranslationStatus.FAILED and not workload.states.exists()
    message = workload.translation_error
    assert "frobnicate" in message and "\n" not in message and len(message) <= uploads.MESSAGE_CHARS
    assert "Traceback" not in message and "steptp-upload-" not in message
    assert tasks.translate_upload.apply(args=[10**9], throw=True).get() == "deleted"


def test_a_failure_reason_becomes_one_short_line():
    reason = ("error: SourceError: /tmp/steptp-upload-ab12/x.py: not valid Python\n"
              "Traceback (most recent call last):\n  File ...")
    assert uploads.short_message(reason) == "error: SourceError: x.py: not valid Python"
    long = uploads.short_message("y" * 1000)
    assert len(long) == uploads.MESSAGE_CHARS and long.endswith("…")
    assert uploads.short_message("\n\n") == "failed without a message"


def test_generation_is_asked_for_once_and_only_for_a_translated_workload(
        cato, broker, django_capture_on_commit_callbacks):
    pending = _submit(cato, django_capture_on_commit_callbacks, name="mine/pending")
    purge(broker, "generate")
    with pytest.raises(generation.NothingToGenerate, match="its translation is queued"):
        generation.request_generation(cato, pending)
    workload = builtin("level1/relu")
    with pytest.raises(PermissionDenied):
        generation.request_generation(user("rhea", Role.REVIEWER), workload)
    with django_capture_on_commit_callbacks(execute=True):
        assert generation.request_generation(cato, workload).generation_status == GenerationStatus.QUEUED
        with pytest.raises(generation.AlreadyGenerating):
            generation.request_generation(cato, workload)
    assert take_queued(broker, "generate") == [
        (dispatch.GENERATE_STEPS, [workload.pk, 1, 0, generation.REQUEST_MAX_STEPS_PER_STATE])]


@pytest.mark.slow  # the real sandbox translates (or generates): 10-30 s
def test_a_generation_records_its_progress_and_outcome(settings, tmp_path, cato):
    settings.VAR_DIR = tmp_path
    workload = builtin("level1/relu")
    report = generation.run_generation(workload.pk, max_steps_per_state=2)
    workload.refresh_from_db()
    assert workload.generation_status == GenerationStatus.DONE
    stored = Step.objects.filter(workload=workload).count()
    assert report.created == stored >= 1
    assert workload.generation_message.startswith(f"{stored} new step")
    broken = Workload.objects.create(name="mine/nothing", source="x", translation_status="failed",
                                     translation_error="nope")
    with pytest.raises(generation.NothingToGenerate):
        generation.run_generation(broken.pk)
    broken.refresh_from_db()
    assert broken.generation_status == GenerationStatus.FAILED
    assert broken.generation_message == "NothingToGenerate: mine/nothing has no source state: nope"


# --------------------------------------------------------------------------------------------- the API


def _api(account) -> APIClient:
    client = APIClient()
    client.force_authenticate(account)
    return client


@pytest.mark.slow  # the real sandbox translates (or generates): 10-30 s
def test_the_api_accepts_an_upload_with_202_and_shows_its_failure(
        cato, broker, django_capture_on_commit_callbacks):
    api = _api(cato)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/workloads/", {"name": "api/broken", "source": FAILS}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["translation_status"] == "queued" and body["source"] == FAILS  # the lines kept
    assert response["Location"] == f"http://testserver/api/workloads/{body['id']}/"
    run_queued(broker, "generate")
    shown = api.get(response["Location"]).json()
    assert shown["translation_status"] == "failed" and "frobnicate" in shown["translation_error"]
    again = api.post("/api/workloads/", {"name": "api/broken", "source": GOOD}, format="json")
    assert again.status_code == 400
    assert again.json() == {"name": ["a workload named 'api/broken' exists already; choose another name"]}
    bad = api.post("/api/workloads/", {"name": "api/syntax", "source": "def (:\n"}, format="json")
    assert bad.status_code == 400 and bad.json()["detail"].startswith("not valid Python")
    assert take_queued(broker, "generate") == []  # the refused ones queued nothing


def test_the_browsable_api_form_sends_the_source_as_a_textarea(cato):
    html = _api(cato).get("/api/workloads/", HTTP_ACCEPT="text/html").content.decode()
    assert '<textarea name="source"' in html
    assert '<input name="source"' not in html


def test_the_api_queues_generation_with_202_or_says_why_not(cato, broker, django_capture_on_commit_callbacks):
    api = _api(cato)
    workload = builtin("level1/relu")
    untranslated = Workload.objects.create(name="mine/queued", source=GOOD, translation_status="queued")
    refused = api.post(f"/api/workloads/{untranslated.pk}/generate/")
    assert refused.status_code == 400 and "no source state" in refused.json()["detail"]
    with django_capture_on_commit_callbacks(execute=True):
        accepted = api.post(f"/api/workloads/{workload.pk}/generate/")
    assert accepted.status_code == 202 and accepted.json()["generation_status"] == "queued"
    assert take_queued(broker, "generate") == [
        (dispatch.GENERATE_STEPS, [workload.pk, 1, 0, generation.REQUEST_MAX_STEPS_PER_STATE])]
    assert api.post(f"/api/workloads/{workload.pk}/generate/").status_code == 400  # already queued
    assert _api(user("vic", Role.VIEWER)).post(f"/api/workloads/{workload.pk}/generate/").status_code == 403


def test_pending_uploads_and_generations_are_the_generate_queues_backlog(cato):
    from curation.services import workers

    Workload.objects.create(name="mine/a", source=GOOD, translation_status="queued")
    Workload.objects.create(name="mine/b", source=GOOD, translation_status="translating")
    Workload.objects.create(name="mine/c", source=GOOD, generation_status="running")
    Workload.objects.create(name="mine/d", source=GOOD, generation_status="done")
    Workload.objects.create(name="mine/e", source=GOOD, translation_status="failed", translation_error="no")
    assert workers.backlog()["generate"] == 3
    (generate,) = [q for q in workers.queue_states() if q.name == "generate"]
    assert generate.stalled  # no live worker serves it: /healthz says so
