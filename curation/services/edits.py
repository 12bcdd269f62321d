"""Editing a step under optimistic locking: a stale writer is refused with the current version.

A writer sends the ``version`` it read. The update is one ``UPDATE … WHERE version = <read>``: if another
edit landed first, no row matches and ``EditConflict`` carries the step as it is now, so the caller (API:
HTTP 409; review page: both versions side by side) can show it — nothing is ever overwritten silently.

Editing the transformed LEIR re-checks it at once (a syntax or checker error is refused with line and
column), stores the new after-state, resets verification and approval, and queues re-verification: a step
cannot be approved until its current version verified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F

from curation.models import ReviewStatus, Step, StepOrigin, VerificationStatus
from curation.services import dispatch
from curation.services.audit import record_change
from curation.services.roles import Role, require
from curation.services.workloads import store_state


class EditConflict(Exception):
    """The step changed since the writer read it; ``current`` is the step as stored now."""

    def __init__(self, current: Step, expected_version: int) -> None:
        self.current = current
        self.expected_version = expected_version
        super().__init__(f"step {current.step_id[:12]} is at version {current.version}, "
                         f"not {expected_version}: someone else changed it")


class InvalidLeir(Exception):
    """The edited LEIR does not parse or check; ``problems`` are (line, column, message) triples."""

    def __init__(self, problems: list[dict[str, Any]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p['line']}:{p['column']}: {p['message']}" for p in problems[:3]))


@dataclass(frozen=True)
class CheckedProgram:
    program_json: dict[str, Any]


def check_leir(text: str, tensors: list[dict[str, Any]]) -> CheckedProgram:
    """Parse and check a body against the step's signature; ``InvalidLeir`` names every problem."""
    from leir.checker import check
    from leir.errors import LeirError, LeirSyntaxError
    from leir.program import program_from_json, program_to_json

    try:
        program = program_from_json({"tensors": tensors, "leir": text})
    except LeirSyntaxError as exc:
        raise InvalidLeir([{"line": exc.line, "column": exc.column, "message": exc.message,
                            "expected": list(exc.expected), "snippet": exc.snippet}]) from None
    except LeirError as exc:
        raise InvalidLeir([{"line": 1, "column": 1, "message": str(exc), "expected": [],
                            "snippet": ""}]) from None
    info = check(program)
    if not info.ok:
        raise InvalidLeir([{"line": d.line or 1, "column": d.column or 1,
                            "message": f"{d.message} [{d.code}]",
                            "expected": [], "snippet": d.fragment} for d in info.errors])
    return CheckedProgram(program_to_json(program))


def _bump(step: Step, expected_version: int, **fields: Any) -> Step:
    """Write ``fields`` and bump the version if nobody else did first; else ``EditConflict``."""
    updated = Step.objects.filter(pk=step.pk, version=expected_version).update(version=F("version") + 1,
                                                                               **fields)
    if not updated:
        raise EditConflict(Step.objects.get(pk=step.pk), expected_version)
    fresh: Step = Step.objects.get(pk=step.pk)
    return fresh


def edit_trace(user: AbstractBaseUser, step: Step, *, expected_version: int, trace_text: str) -> Step:
    """Replace the step's trace text (reviewers and up)."""
    require(user, Role.REVIEWER, "editing a trace")
    with transaction.atomic():
        old = step.trace_text
        fields: dict[str, Any] = {"trace_text": trace_text}
        if step.origin == StepOrigin.ENGINE:
            fields["origin"] = StepOrigin.HUMAN
        fresh = _bump(step, expected_version, **fields)
        record_change(fresh, user, "trace_text", old, trace_text)
    return fresh


def _edited_reasoning(step: Step, effect: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The trace parts and text with their effect and selection lines rewritten for an edited after-state
    (``dataset.effect_reasoning.with_edited_reasoning``); a trace without those lines (a step generated
    before reasoning was written) keeps its text and gains them in its rationale part only."""
    from dataset.effect_reasoning import EFFECT, with_edited_reasoning

    record = {"effect": effect or {}, "status": "unverified", "review": {"origin": StepOrigin.HUMAN.value}}
    trace = dict(step.trace or {})
    if "rationale" in trace:
        trace["rationale"] = with_edited_reasoning(str(trace["rationale"]), record)
    text = step.trace_text
    if any(line.startswith(EFFECT) for line in text.split("\n")):
        text = with_edited_reasoning(text, record)
    return trace, text


def edit_after_leir(user: AbstractBaseUser, step: Step, *, expected_version: int, leir_text: str) -> Step:
    """Replace the transformed LEIR: checked now, re-verification queued, approval reset until it passes.

    The verification uses seed 0: the new after-state is usually unverified, and an edit back to a state
    verified before reads its stored outcome.
    """
    require(user, Role.REVIEWER, "editing the transformed LEIR")
    checked = check_leir(leir_text, step.after.tensors)
    with transaction.atomic():
        after, _ = store_state(step.workload, checked.program_json, parent=step.before, depth=step.depth)
        if after.pk in (step.before_id, step.after_id):
            what = "the before-state" if after.pk == step.before_id else "the current after-state"
            raise InvalidLeir([{"line": 1, "column": 1, "message": f"the edit changes nothing: it is {what}",
                                "expected": [], "snippet": ""}])
        old_leir, old_verification, old_review = step.after.leir, step.verification_status, step.review_status
        # the effect (and the follow-up found from it) was the engine's after-state's: unknown for the edited
        # one, and the trace's effect and selection lines say so rather than keep the old numbers
        effect = {**(step.effect or {}), "estimate": None, "measured": None, "verdict": "unknown",
                  "follow_up": None} if step.effect else step.effect
        trace, trace_text = _edited_reasoning(step, effect)
        fresh = _bump(step, expected_version, after=after, origin=StepOrigin.HUMAN,
                      verification_status=VerificationStatus.QUEUED, review_status=ReviewStatus.UNREVIEWED,
                      effect=effect, trace=trace, trace_text=trace_text)
        record_change(fresh, user, "after_leir", old_leir, after.leir)
        if trace_text != step.trace_text:
            record_change(fresh, user, "trace_text", step.trace_text, trace_text)
        record_change(fresh, user, "verification_status", old_verification, fresh.verification_status)
        record_change(fresh, user, "review_status", old_review, fresh.review_status)
        dispatch.queue_verification(fresh.pk)
    return fresh


def discard_draft(user: AbstractBaseUser, step: Step, *, field: str, draft: str) -> None:
    """Keep a reviewer's refused draft in the audit trail when they choose the other version in a conflict.

    Nothing a reviewer typed is lost: the draft stays readable in the step's history panel.
    """
    if field not in ("trace_text", "after_leir"):
        raise ValueError(f"unknown field {field!r}: trace_text or after_leir")
    require(user, Role.REVIEWER, "resolving an edit conflict")
    record_change(step, user, f"discarded_draft:{field}", draft, "")
