"""Tuner runs through the REST API: curators start them, everyone reads the tree and the speedup series."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from curation.models import RunStatus, Trajectory
from curation.services.roles import Role
from curation.services.tuning import run_trajectory

from .fixtures import builtin, user

pytestmark = pytest.mark.django_db

FAST_TIMING = {"cache": False, "repeats": 2, "min_repeat_ms": 2.0}


def client_for(account) -> APIClient:
    client = APIClient()
    client.force_authenticate(account)
    return client


@pytest.fixture
def workload(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return builtin("level1/layer_norm")


def test_only_curators_start_runs(workload):
    body = {"workload": workload.name, "algorithm": "chain", "budget": {"verifications": 3}}
    assert client_for(user("rex", Role.REVIEWER)).post("/api/trajectories/", body, format="json").status_code == 403
    response = client_for(user("cato", Role.CURATOR)).post("/api/trajectories/", body, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == RunStatus.QUEUED and created["budget"] == {"verifications": 3}
    assert created["explored"] == [] and created["series"] == [] and created["workload"] == workload.name
    assert created["target"] == "llvm-host"  # the tuner builds for the worker's own CPU by default
    assert Trajectory.objects.get().created_by.username == "cato"


@pytest.mark.parametrize(("body", "field", "message"), [
    ({"budget": {"verifications": 0}}, "detail", "must be a positive number"),
    ({"budget": {"verifications": 2.5}}, "detail", "whole number"),
    ({"budget": {"tokens": 5}}, "detail", "unknown budget item(s) tokens"),
    ({"budget": {}}, "detail", "an empty budget"),
    ({"algorithm": "annealing"}, "algorithm", "not a valid choice"),
    ({"workload": "level9/none"}, "workload", "does not exist"),
    ({"workload": "level1/\x00"}, "workload", "does not exist"),  # PostgreSQL refuses NUL in any query
])
def test_bad_run_requests_get_400_with_the_reason(workload, body, field, message):
    request = {"workload": workload.name, **body}
    response = client_for(user("cato", Role.CURATOR)).post("/api/trajectories/", request, format="json")
    assert response.status_code == 400
    assert message in str(response.json()[field])
    assert not Trajectory.objects.exists()


def test_a_real_run_serves_its_tree_and_a_monotone_best_speedup_series(workload):
    curator = user("cato", Role.CURATOR)
    response = client_for(curator).post("/api/trajectories/", {"workload": workload.name, "algorithm": "chain",
                                                               "budget": {"verifications": 3}}, format="json")
    pk = response.json()["id"]
    done = run_trajectory(pk, measure=FAST_TIMING)  # what the `tune` task runs
    assert done.status == RunStatus.DONE, done.error
    viewer = client_for(user("vera", Role.VIEWER))
    detail = viewer.get(f"/api/trajectories/{pk}/").json()
    series = detail["series"]
    assert series[0] == {"verifications": 0, "seconds": 0.0, "best_speedup": 1.0}
    counts = [p["verifications"] for p in series]
    # one point per measured step; a would-be new best's re-timing is part of its step's point
    steps = [later - earlier for earlier, later in zip(counts, counts[1:], strict=False)]
    assert steps and set(steps) <= {1, 2} and 1 <= counts[-1] <= 3
    bests = [p["best_speedup"] for p in series]
    assert bests == sorted(bests) and bests[-1] == pytest.approx(done.best_speedup)
    hashes = {n["hash"] for n in detail["explored"]}
    assert len(detail["explored"]) == len(hashes) >= 2
    assert all(n["parent"] in hashes for n in detail["explored"] if n["parent"])
    listed = viewer.get("/api/trajectories/").json()["results"][0]
    assert listed["id"] == pk and "explored" not in listed and "series" not in listed
