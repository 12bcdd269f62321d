"""The Celery app: declared queues, reliability settings, and a real broker → worker round trip."""

from __future__ import annotations

import threading
import uuid

from celery import Celery
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from kombu import Queue

import curation.tasks  # noqa: F401 - registers the shared ping task on every app
from steptp_web.celery import app

QUEUES = {"generate", "verify.cpu", "verify.cuda", "export", "tune"}


def test_queues_are_declared_and_the_default_is_one_of_them():
    assert {queue.name for queue in app.conf.task_queues} == QUEUES
    assert app.conf.task_default_queue in QUEUES
    assert app.conf.task_create_missing_queues is False


def test_tasks_survive_worker_loss_and_are_time_bounded():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert 0 < app.conf.task_soft_time_limit < app.conf.task_time_limit
    assert app.conf.worker_prefetch_multiplier == 1


def test_results_go_to_the_database_not_a_result_backend():
    assert not app.conf.result_backend
    assert app.conf.task_ignore_result is True
    assert "curation.tasks.ping" in app.tasks


def test_ping_travels_through_the_configured_broker_to_a_worker():
    """Publish on a private queue and let an in-process worker consume only that queue from the real broker.

    A throwaway app with the project's configuration is used so that neither the worker's queue selection
    nor its logging/default-app setup leaks into the project app, and no real queue is drained.
    """
    queue_name = f"test-ping-{uuid.uuid4().hex[:12]}"
    worker_app = Celery("steptp_web_test", set_as_current=False)
    worker_app.config_from_object("django.conf:settings", namespace="CELERY")
    worker_app.amqp.queues.add(Queue(queue_name, routing_key=queue_name))
    done = threading.Event()
    seen: dict[str, object] = {}

    def on_postrun(task_id=None, retval=None, **_kwargs):
        if task_id == seen.get("sent"):
            seen["retval"] = retval
            done.set()

    task_postrun.connect(on_postrun, weak=False)
    try:
        with start_worker(worker_app, pool="solo", perform_ping_check=False, queues=[queue_name]):
            # The id is fixed before publishing: the worker may finish the task before apply_async returns.
            seen["sent"] = task_id = uuid.uuid4().hex
            worker_app.tasks["curation.tasks.ping"].apply_async(queue=queue_name, task_id=task_id)
            assert done.wait(timeout=30), "the worker never ran the ping task"
    finally:
        task_postrun.disconnect(on_postrun)
        app.set_current()
        app.set_default()

    assert seen["retval"] == "pong"
