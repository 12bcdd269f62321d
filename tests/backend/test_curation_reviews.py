"""Reviews under the overlap policy, roles, optimistic-locking edits with audit, and agreement."""

from __future__ import annotations

import pytest
from django.conf import settings

from curation.models import AuditEvent, ReviewStatus, VerificationStatus
from curation.services import agreement, edits, reviews
from curation.services.roles import PermissionDenied, Role

from .fixtures import builtin, engine_step, user
from .workers import publisher, purge, take_queued

pytestmark = pytest.mark.django_db


@pytest.fixture
def people():
    return {"ann": user("ann", Role.REVIEWER), "bob": user("bob", Role.REVIEWER),
            "cat": user("cat", Role.CURATOR), "vic": user("vic", Role.VIEWER)}


def test_two_agreeing_reviews_approve_and_a_disagreement_waits_for_a_curator(people):
    workload = builtin()
    agreed, disputed = engine_step(workload, site=0), engine_step(workload, site=1)
    reviews.submit_review(people["ann"], agreed, decision="approve")
    agreed.refresh_from_db()
    assert agreed.review_status == ReviewStatus.IN_REVIEW
    reviews.submit_review(people["bob"], agreed, decision="approve")
    agreed.refresh_from_db()
    assert agreed.review_status == ReviewStatus.APPROVED

    reviews.submit_review(people["ann"], disputed, decision="approve")
    reviews.submit_review(people["bob"], disputed, decision="reject", reason="trivial_or_shortcut")
    disputed.refresh_from_db()
    assert disputed.review_status == ReviewStatus.DISPUTED
    assert disputed not in reviews.queue_for(people["ann"]) and disputed in reviews.queue_for(people["cat"])
    reviews.submit_review(people["cat"], disputed, decision="reject", reason="trivial_or_shortcut")
    disputed.refresh_from_db()
    assert disputed.review_status == ReviewStatus.REJECTED


def test_roles_and_rules_are_enforced(people):
    step = engine_step(builtin(), verified=VerificationStatus.PENDING)
    with pytest.raises(PermissionDenied, match="reviewer"):
        reviews.submit_review(people["vic"], step, decision="approve")
    with pytest.raises(reviews.ReviewRefused, match="not verified"):
        reviews.submit_review(people["ann"], step, decision="approve")
    with pytest.raises(reviews.ReviewRefused, match="typed reason"):
        reviews.submit_review(people["ann"], step, decision="reject")


def test_undo_takes_back_the_review_and_the_status(people):
    step = engine_step(builtin())
    reviews.submit_review(people["ann"], step, decision="approve")
    assert reviews.undo_last_review(people["ann"], step) is True
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.UNREVIEWED and not step.reviews.exists()
    assert reviews.undo_last_review(people["ann"], step) is False


def test_next_step_spreads_reviewers_and_skips_what_they_decided(people):
    workload = builtin()
    first, second = engine_step(workload, site=0), engine_step(workload, site=1)
    assert reviews.next_step_for(people["ann"]) == first
    assert reviews.next_step_for(people["bob"]) == second  # the least-assigned step first
    reviews.submit_review(people["ann"], first, decision="approve")
    assert reviews.next_step_for(people["ann"]) == second


def test_a_stale_edit_is_refused_with_the_current_version_and_nothing_is_lost(people):
    step = engine_step(builtin())
    version = step.version
    mine = edits.edit_trace(people["ann"], step, expected_version=version, trace_text="ann's trace")
    with pytest.raises(edits.EditConflict) as conflict:
        edits.edit_trace(people["bob"], step, expected_version=version, trace_text="bob's trace")
    assert conflict.value.current.trace_text == "ann's trace" and conflict.value.current.version == mine.version
    events = AuditEvent.objects.filter(step=step, field="trace_text")
    assert [(e.user.username, e.new) for e in events] == [("ann", "ann's trace")]


def test_editing_the_leir_checks_it_resets_approval_and_queues_verification(people, django_capture_on_commit_callbacks):
    step = engine_step(builtin())
    for name in ("ann", "bob"):
        reviews.submit_review(people[name], step, decision="approve")
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.APPROVED
    with pytest.raises(edits.InvalidLeir) as bad:
        edits.edit_after_leir(people["ann"], step, expected_version=step.version, leir_text="B^{4}_{tx=0}[")
    assert bad.value.problems[0]["line"] == 1 and bad.value.problems[0]["column"] > 1
    with pytest.raises(edits.InvalidLeir, match="changes nothing"):
        edits.edit_after_leir(people["ann"], step, expected_version=step.version, leir_text=step.after.leir)
    other = engine_step(step.workload, site=1).after.leir  # a real, different valid program
    broker = publisher(settings.CELERY_BROKER_URL)
    purge(broker, "verify.cpu")
    with django_capture_on_commit_callbacks(execute=True):
        edited = edits.edit_after_leir(people["ann"], step, expected_version=step.version, leir_text=other)
    assert take_queued(broker, "verify.cpu") == [("curation.tasks.verify_step", [edited.pk, "llvm", 0])]
    assert edited.review_status == ReviewStatus.UNREVIEWED
    assert edited.verification_status == VerificationStatus.QUEUED
    assert {e.field for e in AuditEvent.objects.filter(step=step)} >= {"after_leir", "review_status"}
    with pytest.raises(reviews.ReviewRefused, match="not verified"):
        reviews.submit_review(people["bob"], edited, decision="approve")


def test_cohen_kappa_per_strategy_and_the_disagreements(people):
    assert agreement.cohen_kappa([("approve", "approve"), ("reject", "reject")]) == 1.0
    assert agreement.cohen_kappa([("approve", "reject"), ("reject", "approve")]) == -1.0
    assert agreement.cohen_kappa([]) is None
    workload = builtin()
    steps = [engine_step(workload, site=i) for i in range(3)]
    for step, bob_says in zip(steps, ["approve", "approve", "reject"], strict=True):
        reviews.submit_review(people["ann"], step, decision="approve")
        reviews.submit_review(people["bob"], step, decision=bob_says,
                              reason="not_equivalent" if bob_says == "reject" else "")
    (row,) = agreement.agreement_by_strategy()
    assert row.strategy == "loop_unrolling" and row.pairs == 3
    assert row.observed == pytest.approx(2 / 3) and row.disagreements == [steps[2].pk]
    assert row.kappa == pytest.approx(0.0)


def test_the_queue_drops_a_step_once_decided_and_offers_it_again_on_a_new_version(people):
    from curation.models import Step

    step = engine_step(builtin())
    ann = people["ann"]
    reviews.submit_review(ann, step, decision="skip")
    assert step in reviews.queue_for(ann)  # a skip is not a decision
    reviews.submit_review(ann, step, decision="approve")
    assert step not in reviews.queue_for(ann) and step in reviews.queue_for(people["bob"])
    Step.objects.filter(pk=step.pk).update(version=2)  # an edit landed and verified again
    assert step in reviews.queue_for(ann)



def test_queue_size_counts_up_to_the_cap(people):
    workload = builtin()
    for site in range(3):
        engine_step(workload, site=site)
    queue = reviews.queue_for(people["ann"])
    assert reviews.queue_size(queue) == (3, False)
    assert reviews.queue_size(queue, cap=2) == (2, True)
    assert reviews.queue_size(queue, cap=3) == (3, False)


def test_the_reviews_required_come_from_the_settings_and_a_curator_settles(people, settings):
    workload = builtin()
    solo, settled, refused = engine_step(workload, site=0), engine_step(workload, site=1), engine_step(workload, site=2)
    settings.STEPTP_REVIEWS_REQUIRED = 1
    assert reviews.current_policy().required_reviews == 1
    reviews.submit_review(people["ann"], solo, decision="reject", reason="trivial_or_shortcut")
    solo.refresh_from_db()
    assert solo.review_status == ReviewStatus.REJECTED

    settings.STEPTP_REVIEWS_REQUIRED = 3
    reviews.submit_review(people["cat"], settled, decision="approve", settle=True)
    settled.refresh_from_db()
    assert settled.review_status == ReviewStatus.APPROVED
    with pytest.raises(reviews.ReviewRefused, match="only a curator can settle"):
        reviews.submit_review(people["ann"], refused, decision="approve", settle=True)
    with pytest.raises(reviews.ReviewRefused, match="not skip"):
        reviews.submit_review(people["cat"], refused, decision="skip", settle=True)
    refused.refresh_from_db()
    assert refused.review_status == ReviewStatus.UNREVIEWED


def _pending(workloads_and_strategies):
    """Three steps of each (workload, strategy), created together as the engine stores them."""
    made = []
    for workload, strategy in workloads_and_strategies:
        made += [engine_step(workload, strategy=strategy, site=site) for site in range(3)]
    return made


def test_consecutive_queue_steps_rotate_workloads_then_strategies(people):
    layer_norm, softmax = builtin("level1/layer_norm"), builtin("level1/softmax")
    _pending([(layer_norm, "loop_unrolling"), (layer_norm, "loop_parallelization"), (softmax, "loop_split")])
    ann = people["ann"]
    handed = []
    for _ in range(9):
        step = reviews.next_step_for(ann)
        handed.append((step.workload.name, step.strategy))
        reviews.submit_review(ann, step, decision="approve")
    assert reviews.next_step_for(ann) is None
    workloads = [name for name, _ in handed]
    # two workloads pending: they alternate while both have steps left (softmax's 3 run out first)
    assert workloads[:6] == ["level1/layer_norm", "level1/softmax"] * 3
    # inside layer_norm the two strategies alternate too
    layer_norm_strategies = [strategy for name, strategy in handed if name == "level1/layer_norm"]
    assert layer_norm_strategies == ["loop_parallelization", "loop_unrolling"] * 3


def test_the_queue_preview_interleaves_workloads_and_strategies_deterministically(people):
    from curation.services.queue_order import interleaved

    layer_norm, softmax = builtin("level1/layer_norm"), builtin("level1/softmax")
    _pending([(layer_norm, "loop_unrolling"), (layer_norm, "loop_parallelization"), (softmax, "loop_split")])
    queue = reviews.queue_for(people["ann"])
    assert [s.strategy for s in queue.order_by("id")][:3] == ["loop_unrolling"] * 3  # one strategy in a row
    order = [(s.workload.name, s.strategy) for s in interleaved(queue, 100)]
    assert order[:4] == [("level1/layer_norm", "loop_parallelization"), ("level1/softmax", "loop_split"),
                         ("level1/layer_norm", "loop_unrolling"), ("level1/softmax", "loop_split")]
    assert sorted(order) == sorted((s.workload.name, s.strategy) for s in queue)  # every step, once
    assert [s.pk for s in interleaved(queue, 100)] == [s.pk for s in interleaved(reviews.queue_for(people["ann"]), 100)]
