"""The REST API: roles on every endpoint, filters and search, the 409 conflict, tokens, the schema."""

from __future__ import annotations

import re

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import ReviewStatus, Step
from curation.services.roles import Role

from .fixtures import builtin, engine_step, user

pytestmark = pytest.mark.django_db

LIST_ENDPOINTS = ["workloads", "states", "steps", "verifications", "trajectories", "exports"]


def client_for(account) -> APIClient:
    client = APIClient()
    if account is not None:
        client.force_authenticate(account)
    return client


@pytest.fixture
def people():
    return {role: user(role.label, role) for role in (Role.VIEWER, Role.REVIEWER, Role.CURATOR, Role.ADMIN)}


@pytest.mark.parametrize("endpoint", LIST_ENDPOINTS + ["reviews", "users"])
def test_anonymous_clients_get_nothing(endpoint):
    assert APIClient().get(f"/api/{endpoint}/").status_code in (401, 403)


@pytest.mark.parametrize("endpoint", LIST_ENDPOINTS)
def test_viewers_read_every_list(people, endpoint):
    response = client_for(people[Role.VIEWER]).get(f"/api/{endpoint}/")
    assert response.status_code == 200 and "results" in response.json()


def test_role_ladder_on_the_actions(people):
    step = engine_step(builtin())
    viewer, reviewer = client_for(people[Role.VIEWER]), client_for(people[Role.REVIEWER])
    assert viewer.post(f"/api/steps/{step.pk}/review/", {"decision": "approve"}).status_code == 403
    assert viewer.get("/api/reviews/").status_code == 403
    assert reviewer.post(f"/api/steps/{step.pk}/review/", {"decision": "approve"}).status_code == 201
    upload = {"name": "mine", "source": "import torch\n", "level": 1}
    assert reviewer.post("/api/workloads/", upload, format="json").status_code == 403
    assert reviewer.get("/api/users/").status_code == 403
    assert client_for(people[Role.ADMIN]).get("/api/users/").status_code == 200
    assert reviewer.get("/api/users/me/").json()["role"] == "reviewer"


def test_filters_and_trace_search(people):
    workload = builtin()
    steps = [engine_step(workload, site=i) for i in range(3)]
    client = client_for(people[Role.VIEWER])
    found = client.get("/api/steps/", {"strategy": "loop_unrolling", "exactness": "E"}).json()["results"]
    assert sorted(s["id"] for s in found) == sorted(s.pk for s in steps)
    assert client.get("/api/steps/", {"strategy": "loop_tiling"}).json()["results"] == []
    loop = steps[1].site["detail"]["loop"]
    word = "unrolled"
    hits = client.get("/api/steps/", {"q": word}).json()["results"]
    assert len(hits) == 3 and all(word in h["trace_text"] for h in hits)
    assert client.get("/api/steps/", {"q": "flashattention"}).json()["results"] == []
    assert loop


def test_a_stale_edit_gets_409_with_the_current_version(people):
    step = engine_step(builtin())
    ann, bob = client_for(people[Role.REVIEWER]), client_for(user("bob", Role.REVIEWER))
    first = ann.patch(f"/api/steps/{step.pk}/", {"version": 1, "trace_text": "ann"}, format="json")
    assert first.status_code == 200 and first.json()["version"] == 2
    stale = bob.patch(f"/api/steps/{step.pk}/", {"version": 1, "trace_text": "bob"}, format="json")
    assert stale.status_code == 409
    assert stale.json()["current"]["trace_text"] == "ann" and stale.json()["current"]["version"] == 2
    assert Step.objects.get(pk=step.pk).trace_text == "ann"


def test_invalid_leir_edit_is_400_with_positions(people):
    step = engine_step(builtin())
    response = client_for(people[Role.REVIEWER]).patch(
        f"/api/steps/{step.pk}/", {"version": 1, "after_leir": step.after.leir[:-3]}, format="json")
    assert response.status_code == 400
    problem = response.json()["problems"][0]
    assert problem["line"] >= 1 and problem["column"] >= 1 and problem["message"]
    assert Step.objects.get(pk=step.pk).version == 1


def test_token_clients_are_authenticated(people):
    token = Token.objects.create(user=people[Role.VIEWER])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/steps/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/steps/").status_code == 401


def test_reviews_through_the_api_settle_the_step(people):
    step = engine_step(builtin())
    for account in (people[Role.REVIEWER], people[Role.CURATOR]):
        assert client_for(account).post(f"/api/steps/{step.pk}/review/", {"decision": "approve"}).status_code == 201
    assert Step.objects.get(pk=step.pk).review_status == ReviewStatus.APPROVED
    refused = client_for(people[Role.ADMIN]).post(f"/api/steps/{step.pk}/review/", {"decision": "reject"})
    assert refused.status_code == 400 and "reason" in refused.json()["detail"]


def test_schema_and_docs_are_served_from_local_assets(people):
    client = client_for(people[Role.VIEWER])
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200 and "/api/steps/" in schema.json()["paths"]
    docs = client.get("/api/docs/")
    page = docs.content.decode()
    # every script and stylesheet from this server; "cdn." rather than "cdn", which the page's random
    # CSRF token once contained
    off_site = re.findall(r"""(?:src|href)=["'](?:https?:)?//[^"']+""", page)
    assert docs.status_code == 200 and off_site == [] and "cdn." not in page.lower()
    assert "/static/" in page
