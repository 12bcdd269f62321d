"""What the pages say about workers and time, through Django's test client, on real heartbeat rows.

An export or a generation with no live worker on its queue says it waits for one (not "queued 0 %"
forever); a generation a lost worker left running says it stalled and offers the retry; /status/ says how
long the first pass (steps for every translated workload, what ``manage.py demo`` queues) still needs.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from curation.models import Export, GenerationStatus, Step, Workload
from curation.services import workers
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step, user

pytestmark = pytest.mark.django_db

WAITING = "Waiting for a worker: no live worker serves the <code>{}</code> queue"
EARLIER = timedelta(seconds=60)


def test_an_export_with_no_live_export_worker_says_it_waits_for_one(client):
    client.force_login(user("vera", Role.VIEWER))
    export = Export.objects.create(name="waiting", formats=["messages"])  # queued
    url = reverse("export", args=[export.pk])
    assert WAITING.format("export") in client.get(url, HTTP_HX_REQUEST="true").content.decode()
    workers.beat("w@host", ["generate"])  # a live worker, on another queue
    assert WAITING.format("export") in client.get(url).content.decode()
    workers.beat("w@host", ["export", "generate"])
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Waiting for a worker" not in html and 'hx-trigger="every 1s"' in html


def test_a_generation_a_lost_worker_left_running_is_shown_stalled_with_the_retry(client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    workload = builtin("level1/relu")
    Workload.objects.filter(pk=workload.pk).update(generation_status=GenerationStatus.RUNNING,
                                                   generation_since=timezone.now() - timedelta(seconds=10))
    client.force_login(user("cato", Role.CURATOR))
    page = reverse("workload", args=[workload.pk])
    workers.beat("w@host", ["generate"], started_at=timezone.now() - EARLIER)  # holds it
    html = client.get(page).content.decode()
    assert ">running</strong>" in html and "button" not in html.split('id="workload-state"')[1].split("</div>")[0]
    assert "?shown=translated.running\" hx-trigger" in html
    # the worker died and came back (same name, new start): nobody holds the running generation
    workers.beat("w@host", ["generate"], started_at=timezone.now())
    state = client.get(reverse("workload-state", args=[workload.pk]), {"shown": "translated.running"},
                       HTTP_HX_REQUEST="true")
    assert state["HX-Refresh"] == "true"  # the page reloads to show the button
    html = client.get(page).content.decode()
    assert ">stalled — worker lost; retry</strong>" in html and ">Retry generating steps</button>" in html
    assert "Waiting for a worker" not in html
    workers.forget("w@host")  # no worker at all: queued work says it waits for one
    Workload.objects.filter(pk=workload.pk).update(generation_status=GenerationStatus.QUEUED)
    html = client.get(page).content.decode()
    assert WAITING.format("generate") in html and ">queued</strong>" in html and "Retry" not in html


def steps_for(step: Step, name: str) -> None:
    """The workload ``name`` gets a step (a copy of a real one: the count per workload is what matters)."""
    copy = Step.objects.get(pk=step.pk)
    copy.pk, copy.step_id, copy.workload = None, f"copy-{name}", Workload.objects.get(name=name)
    copy.save()


def test_status_says_how_long_the_first_pass_needs_once_a_few_workloads_have_steps(client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    names = ["level1/layer_norm", "level1/logsigmoid_mix", "level1/softmax", "level1/relu"]
    for name in names:
        builtin(name)
    assert 'id="first-pass-eta"' not in client.get("/status/").content.decode()  # no rate before a step
    first = engine_step(Workload.objects.get(name=names[0]))
    steps_for(first, names[1])
    # two of four workloads got their steps over the last two minutes: two more need about two minutes
    Step.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(seconds=120))
    html = client.get("/status/").content.decode()
    assert "steps generated for 2 of them" in html and "4 workloads (4 translated)" in html
    assert ('<p id="first-pass-eta">The first pass (steps for every translated workload) needs about\n'
            "  2 minutes more at the rate so far.</p>") in html
    steps_for(first, names[2])
    assert 'id="first-pass-eta"' in client.get("/status/").content.decode()
    # the last one's generation ended without a step: the pass is over all the same
    Workload.objects.filter(name=names[3]).update(generation_status=GenerationStatus.FAILED)
    assert 'id="first-pass-eta"' not in client.get("/status/").content.decode()


def test_a_stalled_translation_offers_curators_the_retry_and_queues_it(client, settings,
                                                                      django_capture_on_commit_callbacks):
    from tests.backend.test_curation_uploads import GOOD
    from tests.backend.workers import publisher, purge, take_queued

    app = publisher(settings.CELERY_BROKER_URL)
    purge(app, "generate")
    workload = Workload.objects.create(name="mine/relu2", source=GOOD, origin="upload",
                                       translation_status="translating",
                                       translation_since=timezone.now() - timedelta(seconds=10))
    page, retry = reverse("workload", args=[workload.pk]), reverse("retry-translation", args=[workload.pk])
    client.force_login(user("vera", Role.VIEWER))
    assert "Retrying needs the curator role; you have viewer." in client.get(page).content.decode()
    assert client.post(retry).status_code == 403
    client.force_login(user("cato", Role.CURATOR))
    html = client.get(page).content.decode()
    assert ">stalled — worker lost; retry</strong>" in html and ">Retry translation</button>" in html
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(retry, follow=True)
    html = response.content.decode()
    assert "The translation of mine/relu2 is queued again." in html and ">Retry translation</button>" not in html
    assert take_queued(app, "generate") == [("curation.tasks.translate_upload", [workload.pk])]
    again = client.post(retry, follow=True).content.decode()
    assert "the translation of mine/relu2 is queued, not stalled" in again
