"""Queueing work: one module sends every task, and every door that asks for the same work gets the same effects.

* the step page's re-run button and ``POST /api/steps/{id}/verify/`` both go through
  ``services.verification.request_verification``: status ``queued``, an audit event, a fresh seed, and a real
  worker process then stores the new outcome;
* each kind of work (verification, generation, export, tuning) lands on its queue as a message naming a task
  the worker has, also when a management command queues it;
* no view, API endpoint, command, task or other service sends a task itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import AuditEvent, Export, Step, Trajectory, Verification, VerificationStatus
from curation.services import dispatch, exports, tuning, verification
from curation.services.roles import Role

from .fixtures import builtin, engine_step, user
from .workers import publisher, purge, take_queued, wait_for, worker

CURATION = Path(__file__).resolve().parents[2] / "curation"
QUEUES = ("verify.cpu", "verify.cuda", "generate", "export", "tune")


@pytest.fixture
def broker(settings):
    app = publisher(settings.CELERY_BROKER_URL)
    purge(app, *QUEUES)
    return app


def _seeds(step: Step) -> list[int]:
    return sorted(Verification.objects.filter(state=step.after, parent=step.before).values_list("seed", flat=True))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_step_page_and_the_api_rerun_a_verification_with_the_same_effects(settings, tmp_path, broker):
    settings.VAR_DIR = tmp_path  # the worker's verification cache is the test's own: the kernels really run
    workload = builtin()
    on_page, on_api = engine_step(workload, site=0), engine_step(workload, site=1)
    for step in (on_page, on_api):  # a stored seed-0 outcome, which a re-run must not just read back
        verification.verify_step(step.pk)
        assert _seeds(step) == [0]
    ann, bob = user("ann", Role.REVIEWER), user("bob", Role.REVIEWER)
    page = Client()
    assert page.login(username="ann", password="pw-ann")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")

    assert page.post(reverse("review-verify", args=[on_page.pk])).status_code == 302
    answer = api.post(f"/api/steps/{on_api.pk}/verify/")
    assert answer.status_code == 202 and answer.json()["verification_status"] == VerificationStatus.QUEUED

    for step, who in ((on_page, ann), (on_api, bob)):
        step.refresh_from_db()
        assert step.verification_status == VerificationStatus.QUEUED
        assert AuditEvent.objects.filter(step=step, user=who, field="verification_status",
                                         old=VerificationStatus.EQUAL_PASS, new=VerificationStatus.QUEUED).count() == 1
    with worker(settings.CELERY_BROKER_URL, queues="verify.cpu"):
        wait_for(lambda: not Step.objects.filter(pk__in=[on_page.pk, on_api.pk],
                                                 verification_status=VerificationStatus.QUEUED).exists(),
                 300, "both re-runs verified by the worker")
    for step in (on_page, on_api):
        assert _seeds(step) == [0, 1]  # a fresh seed: a new build and run, stored beside the first
        step.refresh_from_db()
        assert step.verification_status == VerificationStatus.EQUAL_PASS


@pytest.mark.django_db
def test_each_kind_of_work_goes_on_its_queue_naming_a_task_the_worker_has(
        broker, django_capture_on_commit_callbacks):
    from celery import current_app

    import curation.tasks  # noqa: F401 - registers the tasks, as a worker does

    workload = builtin()
    step = engine_step(workload)
    engine_step(workload, site=1)  # verified: what the export selects
    cat = user("cat", Role.CURATOR)
    with django_capture_on_commit_callbacks(execute=True):
        verification.request_verification(cat, step, target="cuda")
        export = exports.create_export(cat, name="queued", filters={"all_verified": True})
        trajectory = tuning.start_trajectory(cat, workload=workload, budget={"verifications": 2})
        dispatch.queue_generation(workload.pk, depth=2, seed=3)
        dispatch.queue_translation(workload.pk)
    queued = {queue: take_queued(broker, queue) for queue in QUEUES}
    assert queued == {
        "verify.cpu": [],
        "verify.cuda": [(dispatch.VERIFY_STEP, [step.pk, "cuda", 0])],
        "export": [(dispatch.RUN_EXPORT, [export.pk])],
        "tune": [(dispatch.TUNE, [trajectory.pk])],
        "generate": [(dispatch.GENERATE_STEPS, [workload.pk, 2, 3, None]),
                     (dispatch.TRANSLATE_UPLOAD, [workload.pk])],
    }
    registered = {name for name in current_app.tasks if name.startswith("curation.")}
    assert registered == {dispatch.PING, dispatch.VERIFY_STEP, dispatch.RUN_EXPORT, dispatch.GENERATE_STEPS,
                          dispatch.TUNE, dispatch.TRANSLATE_UPLOAD}


@pytest.mark.django_db
def test_the_commands_queue_through_the_services(broker, django_capture_on_commit_callbacks):
    workload = builtin()
    pending = engine_step(workload, verified=VerificationStatus.PENDING)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("verify_pending", "--queue")
        call_command("generate_steps", "--name", workload.name, "--depth", "2", "--queue")
        call_command("tune", "--name", workload.name, "--budget", "verifications=2", "--queue")
    trajectory = Trajectory.objects.get(workload=workload)
    assert take_queued(broker, "verify.cpu") == [(dispatch.VERIFY_STEP, [pending.pk, "llvm", 0])]
    assert take_queued(broker, "generate") == [(dispatch.GENERATE_STEPS, [workload.pk, 2, 0, None])]
    assert take_queued(broker, "tune") == [(dispatch.TUNE, [trajectory.pk])]


@pytest.mark.django_db(transaction=True)
def test_work_asked_for_in_a_transaction_that_rolls_back_is_not_sent(broker):
    cat = user("cat", Role.CURATOR)
    engine_step(builtin())  # a verified step, so the export itself is not refused
    with pytest.raises(RuntimeError), transaction.atomic():
        exports.create_export(cat, name="never", filters={"all_verified": True})
        raise RuntimeError("the request failed after asking")
    assert not Export.objects.exists() and take_queued(broker, "export") == []


SENDS = {"delay", "apply_async", "send_task", "signature"}


def test_only_the_dispatch_module_sends_tasks_and_nothing_imports_the_tasks():
    offenders = []
    for path in sorted(CURATION.rglob("*.py")):
        name = path.relative_to(CURATION).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=name)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in SENDS and name != "services/dispatch.py"):
                offenders.append(f"{name}:{node.lineno} calls .{node.func.attr}")
            modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            names = [alias.name for alias in node.names] if isinstance(node, ast.ImportFrom) else []
            if "curation.tasks" in modules or (modules == ["curation"] and "tasks" in names):
                offenders.append(f"{name}:{node.lineno} imports curation.tasks")
    assert offenders == []
