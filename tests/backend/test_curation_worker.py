"""The Celery pipeline with real worker processes on real brokers (Redis or the configured one, RabbitMQ).

* import → generate → verify → review → export, with every heavy step run by a worker process;
* a worker killed with SIGKILL in the middle of a verification: the task is redelivered to a second
  worker and the verification is recorded exactly once.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.conf import settings

from curation.models import ReviewStatus, RunStatus, Step, Verification, VerificationStatus, Workload
from curation.services import exports, reviews, workloads
from curation.services.roles import Role

from .fixtures import user
from .workers import RABBITMQ_URL, children_of, publisher, purge, wait_for, worker

# one test process runs this whole module (make test runs pytest-xdist with --dist loadgroup): the RabbitMQ
# cases share one broker's queues, which a second process's workers would drain
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.xdist_group("rabbitmq")]


def _brokers():
    configured = settings.CELERY_BROKER_URL
    brokers = [pytest.param(configured, id="configured")]
    if not configured.startswith("amqp://"):
        brokers.append(pytest.param(RABBITMQ_URL, id="rabbitmq"))
    return brokers


@pytest.mark.parametrize("broker", _brokers())
def test_import_generate_verify_review_export_through_a_worker(broker, tmp_path):
    settings.VAR_DIR = tmp_path
    app = publisher(broker)
    purge(app, "generate", "verify.cpu", "export")
    workloads.import_builtin(names=["level1/layer_norm", "level1/conv2d"])
    with worker(broker, env={"STEPTP_VAR_DIR": str(tmp_path)}):
        for workload in Workload.objects.all():
            app.send_task("curation.tasks.generate_steps", (workload.pk, 1, 0, 3), queue="generate")
        wait_for(lambda: Workload.objects.filter(steps__isnull=False).distinct().count() == 2, 180,
                 "steps of both workloads")
        verified = Step.objects.filter(verification_status=VerificationStatus.EQUAL_PASS)
        assert verified.exists() and not Step.objects.filter(verification_status=VerificationStatus.PENDING)
        ann, bob, cat = user("ann", Role.REVIEWER), user("bob", Role.REVIEWER), user("cat", Role.CURATOR)
        for step in verified:
            reviews.submit_review(ann, step, decision="approve")
            reviews.submit_review(bob, step, decision="approve")
        export = exports.create_export(cat, name="through-a-worker", enqueue=False,
                                       split_policy={"fractions": {"train": 1.0}})
        app.send_task("curation.tasks.run_export", (export.pk,), queue="export")
        done = wait_for(lambda: exports.Export.objects.filter(pk=export.pk, status=RunStatus.DONE).first(), 120,
                        "the export")
    # every step carries its effect, so each state's row answers its best-ranked approved step
    states = Step.objects.filter(review_status=ReviewStatus.APPROVED).values("before").distinct().count()
    assert done.manifest["splits"] == {"train": states}
    assert (tmp_path / "exports" / str(export.pk) / "messages" / "train.jsonl").read_text().count("\n") == states


SLOW_BEFORE = """input A: f32[512, 8192]
input D: f32[8192, 512]
output C: f32[512, 512]
---
L^{512}_{i=0}L^{512}_{j=0}L^{8192}_{k=0}[C^{f32,g}_{i,j}=C^{f32,g}_{i,j}+A^{f32,g}_{i,k}*D^{f32,g}_{k,j};];
"""


def _slow_step() -> Step:
    """A real step (the outer loop unrolled by hand is not what we want: rename nothing, swap L for P)."""
    from leir.program import load_program, program_to_json

    workload = Workload.objects.create(name="slow-matmul", source="", level=1)
    before = load_program(SLOW_BEFORE)
    after = load_program(SLOW_BEFORE.replace("L^{512}_{i=0}", "P^{512}_{i=0}"))
    parent, _ = workloads.store_state(workload, program_to_json(before))
    child, _ = workloads.store_state(workload, program_to_json(after), parent=parent, depth=1)
    return Step.objects.create(step_id="slow-step", workload=workload, before=parent, after=child,
                               strategy="loop_parallelization", number=15, level="loop", exactness="E",
                               trace_text="parallel i", verification_status=VerificationStatus.QUEUED)


def _redelivering_brokers():
    """Brokers that redeliver an unacknowledged message (the embedded filesystem one does not)."""
    configured = settings.CELERY_BROKER_URL
    brokers = [] if configured.startswith("filesystem://") else [pytest.param(configured, id="configured")]
    if not configured.startswith("amqp://"):
        brokers.append(pytest.param(RABBITMQ_URL, id="rabbitmq"))
    return brokers


@pytest.mark.parametrize("broker", _redelivering_brokers())
def test_a_worker_killed_mid_verification_is_replaced_and_the_result_recorded_once(broker, tmp_path):
    settings.VAR_DIR = tmp_path
    app = publisher(broker)
    purge(app, "verify.cpu")
    step = _slow_step()
    with worker(broker, queues="verify.cpu") as first:
        app.send_task("curation.tasks.verify_step", (step.pk, "llvm", 0), queue="verify.cpu")
        # the sandbox worker the verification runs in is a child of the task's process
        wait_for(lambda: children_of(first.pid), 60, "the verification's sandbox process")
        time.sleep(12)  # past the sandbox's TVM import and the build: the kernels are running
        assert not Verification.objects.filter(step=step).exists(), "finished before the kill: test too fast"
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    assert not Verification.objects.filter(step=step).exists()
    with worker(broker, queues="verify.cpu"):
        wait_for(lambda: Verification.objects.filter(step=step).exists(), 240, "the redelivered verification")
        time.sleep(2)  # a duplicate delivery would land now
    assert Verification.objects.filter(state=step.after).count() == 1
    step.refresh_from_db()
    assert step.verification_status == VerificationStatus.EQUAL_PASS
