"""The tuner run pages through Django's test client: roles, the start form, the live fragment, the tree."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.models import RunStatus, Trajectory, Workload
from curation.services.roles import Role
from tests.backend.fixtures import builtin, user

pytestmark = pytest.mark.django_db

FORM = {"workload": "level1/layer_norm", "algorithm": "greedy", "policy": "rule", "verifications": "6",
        "seed": "2", "target": "llvm"}


@pytest.fixture
def workload(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return builtin("level1/layer_norm")


def logged_in(client, name: str, role: Role):
    client.force_login(user(name, role))
    return client


def test_viewers_see_runs_but_cannot_start_one(client, workload):
    logged_in(client, "vera", Role.VIEWER)
    page = client.get(reverse("runs"))
    assert page.status_code == 200 and b"No tuner runs yet." in page.content and b"Start run" not in page.content
    assert client.post(reverse("runs"), FORM).status_code == 403
    assert not Trajectory.objects.exists()


def test_curators_start_a_run_that_is_queued_with_its_budget(client, workload):
    logged_in(client, "cato", Role.CURATOR)
    form = client.get(reverse("runs"))
    assert b'<option value="level1/layer_norm">' in form.content and b'<option value="mcts">' in form.content
    assert b'<option value="llvm-host" selected>' in form.content  # the tuner's default target
    response = client.post(reverse("runs"), {**FORM, "seconds": "30"})
    run = Trajectory.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("run", args=[run.pk])
    assert (run.workload, run.algorithm, run.policy, run.seed, run.target) == (workload, "greedy", "rule", 2,
                                                                               "llvm")
    assert run.budget == {"verifications": 6, "seconds": 30.0} and run.status == RunStatus.QUEUED
    assert run.created_by.username == "cato"


@pytest.mark.parametrize(("change", "message"), [
    ({"verifications": ""}, b"give at least one budget"),
    ({"verifications": "0"}, b"greater than or equal to 1"),
    ({"algorithm": "annealing"}, b"Select a valid choice"),
    ({"target": "llvm-avx9"}, b"Select a valid choice"),
    ({"workload": "level9/none"}, b"Select a valid choice"),
])
def test_bad_run_requests_are_refused_with_a_message(client, workload, change, message):
    logged_in(client, "cato", Role.CURATOR)
    response = client.post(reverse("runs"), {**FORM, **change})
    assert response.status_code == 400 and message in response.content
    assert not Trajectory.objects.exists()


def test_a_workload_that_did_not_translate_is_not_offered(client, workload):
    Workload.objects.create(name="broken", source="import torch\n", translation_error="nope")
    logged_in(client, "cato", Role.CURATOR)
    assert b'value="broken"' not in client.get(reverse("runs")).content
    assert client.post(reverse("runs"), {**FORM, "workload": "broken"}).status_code == 400


def _run(workload, status: str) -> Trajectory:
    """A run as the live hook stores it: source → two children, one grandchild on the best path."""
    explored = [
        {"hash": "h0", "parent": None, "depth": 0, "speedup": 1.0, "step_id": None, "label": "source"},
        {"hash": "h1", "parent": "h0", "depth": 1, "speedup": 1.5, "step_id": "s1",
         "label": "loop_parallelization at L0"},
        {"hash": "h2", "parent": "h0", "depth": 1, "speedup": 0.9, "step_id": "s2",
         "label": "loop_unrolling at L1"},
        {"hash": "h3", "parent": "h1", "depth": 2, "speedup": 2.25, "step_id": "s3",
         "label": "loop_vectorization at L2"},
    ]
    series = [{"verifications": 0, "seconds": 0.0, "best_speedup": 1.0},
              {"verifications": 1, "seconds": 1.2, "best_speedup": 1.5},
              {"verifications": 2, "seconds": 2.0, "best_speedup": 1.5},
              {"verifications": 3, "seconds": 3.1, "best_speedup": 2.25}]
    return Trajectory.objects.create(workload=workload, algorithm="beam", policy="rule",
                                     budget={"verifications": 5}, status=status, explored=explored,
                                     series=series, best_speedup=2.25)


def test_a_running_run_polls_its_fragment_with_tree_series_and_chart_data(client, workload):
    run = _run(workload, RunStatus.RUNNING)
    logged_in(client, "vera", Role.VIEWER)
    page = client.get(reverse("run", args=[run.pk])).content.decode()
    assert 'id="run-chart"' in page and "vendor/chart.umd.min.js" in page
    assert 'hx-trigger="every 1s"' in page and "Refresh</a>" in page
    fragment = client.get(reverse("run", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="run-chart"' not in fragment  # the chart persists across swaps
    assert '<script id="run-series" type="application/json">' in fragment
    assert '"best_speedup": 2.25' in fragment
    assert fragment.count("<tr><td>") == 4  # one table row per series point
    # the tree nests h3 under h1, and marks the best path (source → h1 → h3), not h2
    assert fragment.index("loop_parallelization at L0") < fragment.index("loop_vectorization at L2")
    assert fragment.count('class="tree-node on-best-path"') == 3
    assert "2.250×" in fragment and "4 states reached" in fragment


def test_a_finished_run_stops_polling(client, workload):
    run = _run(workload, RunStatus.DONE)
    logged_in(client, "vera", Role.VIEWER)
    page = client.get(reverse("run", args=[run.pk])).content.decode()
    assert "hx-trigger" not in page and "Refresh</a>" not in page and "status-done" in page
    listing = client.get(reverse("runs")).content.decode()
    assert reverse("run", args=[run.pk]) in listing and "2.250×" in listing


def test_a_failed_run_shows_its_error(client, workload):
    run = Trajectory.objects.create(workload=workload, algorithm="chain", policy="llm",
                                    budget={"verifications": 1}, status=RunStatus.FAILED,
                                    error="ValueError: policy llm needs STEPTP_LLM_URL")
    logged_in(client, "vera", Role.VIEWER)
    page = client.get(reverse("run", args=[run.pk])).content.decode()
    assert 'role="alert">ValueError: policy llm needs STEPTP_LLM_URL' in page
    assert "Nothing explored yet." in page


def test_a_finished_run_links_its_best_program_and_run_files_with_their_content_types(client, workload):
    from curation.services import tuning
    from curation.services.workloads import source_state
    from leir.program import load_program
    from tuner.files import run_paths

    run = _run(workload, RunStatus.DONE)
    logged_in(client, "vera", Role.VIEWER)
    assert client.get(reverse("run-best", args=[run.pk])).status_code == 404  # no best state yet
    assert client.get(reverse("run-file", args=[run.pk, "records"])).status_code == 404  # not written
    assert "Downloads:" not in client.get(reverse("run", args=[run.pk])).content.decode()

    best = source_state(workload)
    Trajectory.objects.filter(pk=run.pk).update(best_state=best)
    paths = run_paths(tuning.run_path(run))
    paths["records"].parent.mkdir(parents=True, exist_ok=True)
    paths["records"].write_text('{"step_id": "s1"}\n{"step_id": "s3"}\n')
    paths["summary"].write_text('{"best": {"speedup": 2.25}}\n')

    page = client.get(reverse("run", args=[run.pk])).content.decode()
    assert f'href="{reverse("run-best", args=[run.pk])}"' in page
    assert f'href="{reverse("run-file", args=[run.pk, "records"])}"' in page
    assert f'href="{reverse("run-file", args=[run.pk, "summary"])}"' in page
    assert reverse("run-file", args=[run.pk, "transcript"]) not in page  # a rule policy keeps none

    leir = client.get(reverse("run-best", args=[run.pk]))
    assert leir["Content-Type"] == "text/plain; charset=utf-8"
    assert f'filename="run-{run.pk}-best.leir"' in leir["Content-Disposition"]
    program = load_program(leir.content.decode())  # a complete file: signature and body
    assert program == best.as_program()

    records = client.get(reverse("run-file", args=[run.pk, "records"]))
    assert records["Content-Type"] == "application/x-ndjson"
    assert b"".join(records.streaming_content) == paths["records"].read_bytes()
    summary = client.get(reverse("run-file", args=[run.pk, "summary"]))
    assert summary["Content-Type"] == "application/json" and f"run-{run.pk}.summary.json" in summary[
        "Content-Disposition"]
    assert client.get(reverse("run-file", args=[run.pk, "secrets"])).status_code == 404
