"""Reviews: decisions with typed reasons, the overlap policy, the review queue, undo.

Overlap policy (declared, not scattered): a step needs ``required_reviews`` independent decisions from
different reviewers on its current version (``settings.STEPTP_REVIEWS_REQUIRED``, 2 by default, 1 for a
team of one). When they agree the step is approved or rejected; when they disagree it is *disputed* until a
curator adjudicates. A curator may also *settle* any step with one decision (``settle=True``): the
decision adjudicates, whatever the step's status. A step can be approved only when its current
version verified as its exactness demands (``equal_pass`` for E steps, ``pass`` for N).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from curation.models import Decision, RejectReason, Review, ReviewStatus, Step, VerificationStatus
from curation.services.audit import record_change
from curation.services.queue_order import next_in_rotation
from curation.services.roles import AnyUser, Role, has_role, require


@dataclass(frozen=True)
class OverlapPolicy:
    required_reviews: int = 2


def current_policy() -> OverlapPolicy:
    """The deployment's overlap policy (read per call, so a test's ``settings`` override applies)."""
    return OverlapPolicy(required_reviews=settings.STEPTP_REVIEWS_REQUIRED)


class ReviewRefused(Exception):
    """A review that cannot be taken (not verified yet, reject without reason, stale version)."""


def verified_for_approval(step: Step) -> bool:
    if step.exactness == "E":
        found: bool = step.verification_status == VerificationStatus.EQUAL_PASS
        return found
    return step.verification_status in (VerificationStatus.PASS, VerificationStatus.EQUAL_PASS)


def _settle(step: Step, policy: OverlapPolicy) -> str:
    """The review status the current version's reviews imply."""
    current = step.reviews.filter(step_version=step.version).exclude(decision=Decision.SKIP)
    adjudication = current.filter(adjudication=True).order_by("-created_at", "-id").first()
    if adjudication is not None:
        return ReviewStatus.APPROVED if adjudication.decision == Decision.APPROVE else ReviewStatus.REJECTED
    latest: dict[int, str] = {}
    for review in current.order_by("created_at", "id"):
        latest[review.reviewer_id] = review.decision
    if not latest:
        return ReviewStatus.UNREVIEWED
    if len(latest) < policy.required_reviews:
        return ReviewStatus.IN_REVIEW
    decisions = set(latest.values())
    if len(decisions) > 1:
        return ReviewStatus.DISPUTED
    return ReviewStatus.APPROVED if decisions == {Decision.APPROVE} else ReviewStatus.REJECTED


def _apply_status(step: Step, user: AnyUser, policy: OverlapPolicy) -> Step:
    status = _settle(step, policy)
    if status != step.review_status:
        old = step.review_status
        Step.objects.filter(pk=step.pk).update(review_status=status)
        step.review_status = status
        record_change(step, user, "review_status", old, status)
    return step


def submit_review(user: AnyUser, step: Step, *, decision: str, reason: str = "", comment: str = "",
                  step_version: int | None = None, policy: OverlapPolicy | None = None,
                  settle: bool = False) -> Review:
    """Record one decision; a curator's decision on a disputed step, or one made with ``settle``,
    adjudicates it."""
    policy = policy or current_policy()
    require(user, Role.REVIEWER, "reviewing a step")
    if decision not in Decision.values:
        raise ReviewRefused(f"unknown decision {decision!r}; one of {', '.join(Decision.values)}")
    if reason and reason not in RejectReason.values:
        known = ", ".join(v for v in RejectReason.values if v)
        raise ReviewRefused(f"unknown reason {reason!r}; one of {known}")
    if decision == Decision.REJECT and not reason:
        raise ReviewRefused("a rejection needs a typed reason")
    if settle and not has_role(user, Role.CURATOR):
        raise ReviewRefused("only a curator can settle a step with one decision")
    if settle and decision == Decision.SKIP:
        raise ReviewRefused("settling takes a decision: approve or reject, not skip")
    with transaction.atomic():
        step = Step.objects.select_for_update().get(pk=step.pk)
        if step_version is not None and step_version != step.version:
            raise ReviewRefused(f"the step changed (version {step.version}, you reviewed {step_version}); "
                                "look at the current version first")
        if decision == Decision.APPROVE and not verified_for_approval(step):
            raise ReviewRefused(f"this version has not verified yet (status {step.verification_status}); "
                                f"an {step.exactness} step needs "
                                f"{'equal_pass' if step.exactness == 'E' else 'pass'} before approval")
        adjudicate = settle or (step.review_status == ReviewStatus.DISPUTED and has_role(user, Role.CURATOR))
        review: Review = Review.objects.create(
            step=step, reviewer=user, decision=decision, reason=reason if decision == Decision.REJECT else "",
            comment=comment, step_version=step.version, adjudication=adjudicate)
        step.assigned_to.remove(user)
        _apply_status(step, user, policy)
    return review


def undo_last_review(user: AnyUser, step: Step, policy: OverlapPolicy | None = None) -> bool:
    """Take back the user's latest review of this step; ``False`` when there is none."""
    policy = policy or current_policy()
    require(user, Role.REVIEWER, "undoing a review")
    with transaction.atomic():
        step = Step.objects.select_for_update().get(pk=step.pk)
        last = step.reviews.filter(reviewer=user).order_by("-created_at", "-id").first()
        if last is None:
            return False
        record_change(step, user, "review_undone", f"{last.decision} (review {last.pk})", "")
        last.delete()
        _apply_status(step, user, policy)
    return True


def queue_for(user: AnyUser, *, strategy: str | None = None) -> QuerySet[Step]:
    """Steps this reviewer should see: verified, not settled, not yet decided by them on this version.

    Disputed steps are in a curator's queue only.
    """
    statuses = [ReviewStatus.UNREVIEWED, ReviewStatus.IN_REVIEW]
    if has_role(user, Role.CURATOR):
        statuses.append(ReviewStatus.DISPUTED)
    verified = Q(exactness="E", verification_status=VerificationStatus.EQUAL_PASS) | Q(
        exactness="N", verification_status__in=[VerificationStatus.PASS, VerificationStatus.EQUAL_PASS])
    steps = Step.objects.filter(verified, review_status__in=statuses)
    if strategy:
        steps = steps.filter(strategy=strategy)
    # one correlated subquery, not the reviewer's whole review history loaded into Python
    decided = Review.objects.filter(reviewer=user, step=OuterRef("pk"), step_version=OuterRef("version")
                                    ).exclude(decision=Decision.SKIP)
    return steps.exclude(Exists(decided)).order_by("id")


def next_step_for(user: AnyUser, *, strategy: str | None = None) -> Step | None:
    """The next step for this reviewer, assigned to them so two reviewers spread over the queue.

    Steps already assigned to this reviewer come first; then steps with the fewest assignees. Within
    each, workloads and strategies take turns (``queue_order.next_in_rotation``), so consecutive steps rotate.
    """
    from django.db.models import Count

    queue = queue_for(user, strategy=strategy)
    mine: Step | None = next_in_rotation(queue.filter(assigned_to=user), user)
    if mine is not None:
        return mine
    skipped = Review.objects.filter(reviewer=user, decision=Decision.SKIP).values("step_id")
    fresh = queue.exclude(pk__in=skipped)
    # the fewest assignees is zero whenever an unassigned step is left: take it without counting them all
    chosen: Step | None = (next_in_rotation(fresh.filter(assigned_to__isnull=True), user)
                           or fresh.annotate(n=Count("assigned_to")).order_by("n", "id").first()
                           or queue.first())
    if chosen is not None:
        chosen.assigned_to.add(user)
    return chosen


def last_review_by(user: AnyUser) -> Review | None:
    """The user's most recent review of any step (what an "undo" button takes back)."""
    if not getattr(user, "is_authenticated", False):
        return None
    found: Review | None = (Review.objects.filter(reviewer=user).select_related("step")
                            .order_by("-created_at", "-id").first())
    return found



#: The queue page counts up to this many steps exactly and shows "N+" beyond (an exact count is a scan).
COUNT_CAP = 1000


def queue_size(queue: QuerySet[Step], cap: int = COUNT_CAP) -> tuple[int, bool]:
    """How many steps the queue holds, up to ``cap``; the flag says there are more."""
    n = queue.order_by()[:cap + 1].count()
    return min(n, cap), n > cap
