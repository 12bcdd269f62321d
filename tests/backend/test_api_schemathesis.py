"""Property-based API testing with schemathesis against the served OpenAPI schema.

Every operation is called with generated requests, as an admin token client (the widest access); no
response may be a server error or disagree with the schema. The number of examples is bounded so the run
stays within a couple of minutes.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings, strategies
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from curation.models import ReviewStatus, Step
from curation.services.roles import Role
from steptp_web.wsgi import application

from .fixtures import builtin, engine_step, user

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


@pytest.fixture
def keep_test_connection():
    """Requests through the WSGI app must not close the test's database connection (Django's test client
    disconnects the same handlers)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def admin_token(db, keep_test_connection):
    admin = user("root", Role.ADMIN)
    step = engine_step(builtin())
    Step.objects.filter(pk=step.pk).update(review_status=ReviewStatus.APPROVED)
    return Token.objects.create(user=admin).key


#: One test per operation, named by its label: schemathesis's own ``parametrize()`` gives every case the same
#: node id, which pytest-xdist's group scheduling (``make test``) folds into one test.
#: ``POST /api/workloads/`` is in: it answers at once now (202, the translation is queued).
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.mark.django_db
@pytest.mark.parametrize("operation", OPERATIONS, ids=[operation.label for operation in OPERATIONS])
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=strategies.data())
def test_no_server_errors_and_responses_match_the_schema(operation, admin_token, data):
    case = data.draw(operation.as_strategy())
    case.call_and_validate(headers={"Authorization": f"Token {admin_token}"},
                           checks=[not_a_server_error, response_schema_conformance, content_type_conformance])


def test_every_operation_of_the_served_schema_is_tested():
    labels = {operation.label for operation in OPERATIONS}
    assert len(labels) == len(OPERATIONS) >= 20
    assert {"GET /api/steps/", "POST /api/trajectories/", "PATCH /api/steps/{id}/", "POST /api/workloads/",
            "POST /api/workloads/{id}/generate/"} <= labels
