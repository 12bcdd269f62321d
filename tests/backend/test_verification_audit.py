"""The worker's verification outcomes join the step's audit trail, with the reason when one fails.

The verifier really runs (in-process, as the worker's task calls it); the failing step is a real program
whose after-state computes something else than its before-state.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from curation.models import AuditEvent, Step, VerificationStatus
from curation.services import verification
from curation.services.roles import Role
from curation.services.workloads import store_state

from .fixtures import builtin, engine_step, user

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def workload(settings, tmp_path):
    settings.VAR_DIR = tmp_path  # the verification cache is the test's own: the kernels really run
    return builtin()


def _events(step: Step) -> list[tuple[str | None, str, str, str]]:
    return [(e.user.username if e.user else None, e.field, e.old, e.new)
            for e in AuditEvent.objects.filter(step=step).order_by("id")]


def test_a_passing_outcome_is_audited_once_even_when_the_task_is_delivered_twice(workload):
    step = engine_step(workload, verified=VerificationStatus.QUEUED)
    verification.verify_step(step.pk)
    events = _events(step)
    assert events[0] == (None, "verification_status", "queued", "equal_pass")
    assert events[1][:3] == (None, "verification_outcome", "")
    assert events[1][3].startswith("equal_pass on llvm, seed 0")
    verification.verify_step(step.pk)  # a redelivered task reads the stored outcome: nothing new to say
    assert _events(step) == events


def test_a_failing_outcome_is_audited_with_its_reason_and_shown_in_the_history(workload):
    from leir.program import program_from_json, program_to_json

    step = engine_step(workload, verified=VerificationStatus.QUEUED)
    program = step.after.as_program_json()
    wrong = dict(program, leir=program["leir"].replace("+", "-", 1))
    assert wrong["leir"] != program["leir"]
    after, _ = store_state(workload, program_to_json(program_from_json(wrong)), parent=step.before, depth=1)
    Step.objects.filter(pk=step.pk).update(after=after)
    verification.verify_step(step.pk)
    step.refresh_from_db()
    assert step.verification_status == VerificationStatus.FAIL
    outcome = AuditEvent.objects.get(step=step, field="verification_outcome").new
    assert outcome.startswith("fail on llvm, seed 0 — ") and "allowance" in outcome
    client = Client()
    client.force_login(user("vic", Role.VIEWER))
    html = client.get(reverse("step", args=[step.pk])).content.decode()
    assert "verification_outcome" in html and "fail on llvm, seed 0" in html and "queued</span> → " in html
