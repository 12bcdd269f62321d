"""Verifying stored steps: run the verifier, store the result once, update the step's status.

Each outcome that changes a step's status is written to its audit trail by the worker (user ``None``:
the history shows "system"): the status change and a ``verification_outcome`` line saying why.

Idempotent by construction: a verification is keyed by after-state + parent + target + seed + toolchain,
so a redelivered task (a worker died after verifying but before acknowledging) finds the stored row and
only re-applies the status. A program that fails to build or verify is an *outcome* stored like any other;
only infrastructure trouble (the database or sandbox pool going away) raises, and only that is retried.
"""

from __future__ import annotations

from django.db import transaction

from curation.models import Step, Verification, VerificationStatus
from curation.services import dispatch
from curation.services.audit import record_change
from curation.services.roles import AnyUser, Role, require
from curation.services.steps import record_verification, toolchain_of

#: The targets a step can be verified on (each served by its own queue, ``dispatch.queue_for_target``).
TARGETS = ("llvm", "cuda")

#: Outcomes that mean the program itself is broken (never worth a retry).
PROGRAM_FAILURES = frozenset({"check_error", "build_error", "runtime_error", "crash", "timeout",
                              "memory_limit"})


def status_for(step: Step, outcome: str) -> str:
    """The step's verification status for an outcome, by what its exactness requires."""
    if outcome == "equal_pass":
        return VerificationStatus.EQUAL_PASS
    if outcome == "pass":
        return VerificationStatus.PASS if step.exactness == "N" else VerificationStatus.FAIL
    if outcome in PROGRAM_FAILURES:
        return VerificationStatus.ERROR
    return VerificationStatus.FAIL


def existing_verification(step: Step, target: str, seed: int) -> Verification | None:
    from verifier.cache import toolchain_versions

    found: Verification | None = Verification.objects.filter(
        state=step.after, parent=step.before, target=target, seed=seed,
        toolchain=toolchain_of(toolchain_versions())).first()
    return found


def verify_step(step_pk: int, *, target: str = "llvm", seed: int = 0) -> Verification:
    """Verify the step's current after-state against its before-state and record the outcome once."""
    from verifier.verify import verify

    step = Step.objects.select_related("before", "after").get(pk=step_pk)
    verification = existing_verification(step, target, seed)
    if verification is None:
        after = step.after.as_program()
        before = step.before.as_program()
        result = verify(after, parent=before, target=target, seed=seed)
        verification, _ = record_verification(step.after, result.to_json(), step=step, parent=step.before)
    with transaction.atomic():
        current = Step.objects.select_for_update().get(pk=step.pk)
        status = status_for(step, verification.outcome)
        # the status belongs to the state that was verified: an edit made meanwhile keeps its own status
        if current.after_id == verification.state_id and current.verification_status != status:
            old = current.verification_status
            Step.objects.filter(pk=step.pk).update(verification_status=status)
            current.verification_status = status
            # the worker's outcome joins the audit trail; a redelivered task changes nothing, so adds nothing
            record_change(current, None, "verification_status", old, status)
            record_change(current, None, "verification_outcome", "", describe_outcome(verification))
    return verification


def describe_outcome(verification: Verification) -> str:
    """One line for the history: the outcome, where and on which seed, and why when it did not pass."""
    result = verification.result or {}
    text = f"{verification.outcome} on {verification.target}, seed {verification.seed}"
    reasons: list[str] = []
    error = str(result.get("error") or "")[:300]
    if verification.error_class or error:
        reasons.append(": ".join(part for part in (verification.error_class, error) if part))
    ratio = result.get("max_error_ratio")
    if verification.outcome not in ("pass", "equal_pass") and isinstance(ratio, (int, float)) and ratio > 1:
        reasons.append(f"worst error {ratio:.3g}x its allowance")
    reasons.extend(str(note) for note in (result.get("notes") or [])[:2])
    if verification.speedup_vs_parent is not None:
        reasons.append(f"{verification.speedup_vs_parent:.3g}x the parent")
    return text + (" — " + "; ".join(reasons) if reasons else "")


def latest_verification(step: Step) -> Verification | None:
    """The newest stored verification of the step's current after-state against its before-state."""
    found: Verification | None = (Verification.objects.filter(state=step.after_id, parent=step.before_id)
                                  .order_by("-created_at", "-id").first())
    return found


def next_seed(step: Step, target: str) -> int:
    """The input seed a re-run uses: 0 for a state never verified on ``target``, else one past the highest.

    Verifications are idempotent per state + target + seed + toolchain, so asking again with a seed already
    used would only read the stored outcome back; a fresh seed builds, runs and times the kernel again, on
    other seeded inputs.
    """
    from django.db.models import Max

    from verifier.cache import toolchain_versions

    highest = Verification.objects.filter(
        state=step.after_id, parent=step.before_id, target=target,
        toolchain=toolchain_of(toolchain_versions())).aggregate(Max("seed"))["seed__max"]
    return 0 if highest is None else highest + 1


def request_verification(user: AnyUser, step: Step, *, target: str = "llvm") -> Step:
    """A reviewer asks for (re-)verification: the status becomes ``queued`` and the task is sent on commit.

    The one way a person asks for it, whichever door they use (the step page's re-run button, ``POST
    /api/steps/{id}/verify/``). A state already verified is verified again on the next seed (``next_seed``):
    new inputs, a new build and timing, a new stored outcome. The change of status is in the audit trail.
    Approval stays disabled until the worker records an accepted outcome (``reviews.verified_for_approval``).
    """
    require(user, Role.REVIEWER, "re-running a verification")
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: {' or '.join(TARGETS)}")
    with transaction.atomic():
        old = step.verification_status
        Step.objects.filter(pk=step.pk).update(verification_status=VerificationStatus.QUEUED)
        step.verification_status = VerificationStatus.QUEUED
        record_change(step, user, "verification_status", old, step.verification_status)
        dispatch.queue_verification(step.pk, target=target, seed=next_seed(step, target))
    return step
