"""The review core: the queue ("next step for me"), the step screen, reviewing, editing, re-verification.

Views parse the request and call ``curation.services`` (reviews, edits, verification, audit); every
decision the data needs — the overlap policy, approval only after verification, optimistic locking — is
the services'. Forms post and redirect (JavaScript off works); htmx only adds the live LEIR check and the
verification panel that refreshes itself while a verification is queued.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from curation.models import Decision, RejectReason, Step, VerificationStatus
from curation.services import audit, edits, reviews, verification
from curation.services.queue_order import interleaved
from curation.services.roles import PermissionDenied, Role, has_role
from curation.views import drafts
from curation.views.access import is_htmx, role_required
from curation.views.history import history_rows
from curation.views.step_display import diff_rows, leir_problems, pretty_after, verification_view

#: Verification statuses during which the verification panel polls for the outcome.
WAITING = (VerificationStatus.PENDING, VerificationStatus.QUEUED)


def _step(pk: int) -> Step:
    return get_object_or_404(Step.objects.select_related("workload", "before", "after"), pk=pk)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _queue_url(strategy: str = "") -> str:
    url = reverse("queue")
    return f"{url}?strategy={strategy}" if strategy else url


def _strategy_names() -> list[str]:
    """Every registered strategy by catalogue number (the filter's choices; no scan of the steps)."""
    from strategies import all_strategies

    return [strategy.name for strategy in sorted(all_strategies(), key=lambda s: s.number)]


# ---- the queue ---------------------------------------------------------------------------------------

@role_required(Role.REVIEWER)
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    """The reviewer's queue: how many steps wait for them, the first few, and the "next step" button."""
    strategy = request.GET.get("strategy", "")
    steps = reviews.queue_for(request.user, strategy=strategy or None)
    upcoming = interleaved(steps, 20)
    assigned = request.user.assigned_steps.filter(pk__in=[s.pk for s in upcoming])
    mine = set(assigned.values_list("pk", flat=True))
    count, more = reviews.queue_size(steps)
    context = {"strategy": strategy, "strategies": _strategy_names(), "mine": mine,
               "count": count, "more": more, "upcoming": upcoming,
               "last_review": reviews.last_review_by(request.user),
               "policy": reviews.current_policy()}
    return render(request, "curation/review/queue.html", context)


@role_required(Role.REVIEWER)
@require_POST
def next_step(request: HttpRequest) -> HttpResponse:
    """Assign the next step to this reviewer (the backend's overlap policy) and open it."""
    strategy = request.POST.get("strategy", "")
    step = reviews.next_step_for(request.user, strategy=strategy or None)
    if step is None:
        messages.info(request, "Nothing left in your queue" + (f" for {strategy}." if strategy else "."))
        return redirect(_queue_url(strategy))
    url = reverse("step", args=[step.pk])
    return redirect(f"{url}?strategy={strategy}" if strategy else url)


@role_required(Role.REVIEWER)
@require_POST
def undo(request: HttpRequest) -> HttpResponse:
    """Take back this reviewer's latest review, wherever it was, and show that step again."""
    last = reviews.last_review_by(request.user)
    if last is None:
        messages.info(request, "You have no review to undo.")
        return redirect(request.POST.get("back") or reverse("queue"))
    reviews.undo_last_review(request.user, last.step)
    messages.success(request, f"Undid your {last.decision} of step {last.step.step_id[:16]}.")
    return redirect("step", pk=last.step_id)


# ---- the step screen ---------------------------------------------------------------------------------

def effect_rows(effect: Mapping[str, Any] | None) -> list[tuple[str, Any, Any]]:
    """(feature, before, after) of the effect's cost-model estimate, in the record's key order."""
    estimate = (effect or {}).get("estimate") or {}
    before, after = estimate.get("parent") or {}, estimate.get("child") or {}
    return [(key, before.get(key), after.get(key)) for key in before]


def _context(request: HttpRequest, step: Step, **extra: Any) -> dict[str, Any]:
    last = reviews.last_review_by(request.user)
    context: dict[str, Any] = {
        "step": step,
        "strategy_filter": request.GET.get("strategy", "") or request.POST.get("strategy", ""),
        "blocks": diff_rows(step),
        "after_text": pretty_after(step),
        "verification": verification_view(verification.latest_verification(step)),
        "approvable": reviews.verified_for_approval(step),
        "can_settle": has_role(request.user, Role.CURATOR),
        "waiting": step.verification_status in WAITING,
        "reasons": [(value, label) for value, label in RejectReason.choices if value],
        "history": history_rows(audit.history(step)),
        "reviews": list(step.reviews.select_related("reviewer").order_by("created_at", "id")),
        "assignees": list(step.assigned_to.order_by("username")),
        "last_review": last,
        "problems": None,
        "effect_rows": effect_rows(step.effect),
    }
    context.update(extra)
    return context


def _draft_url(pk: int, field: str) -> str:
    """Where a refused LEIR draft is shown again: the step page, editor open, the draft in it."""
    return f"{reverse('step', args=[pk])}?draft={field}#edit-title"


@role_required(Role.VIEWER)
@require_GET
def step_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One step: the diff, the trace, parameters, the verification and (for reviewers) every action.

    ``?draft=after_leir`` (the target of a refused save or a no-JavaScript check) puts the kept draft back
    in the editor with its problems, so a reload shows the same thing instead of re-posting.
    """
    step = _step(pk)
    extra: dict[str, Any] = {}
    draft = drafts.get(request, step.pk, "after_leir") if request.GET.get("draft") == "after_leir" else None
    if draft is not None:
        # the draft keeps the version it was written against: saving it over a newer step is a conflict
        extra = {"after_text": draft["text"], "problems": leir_problems(draft["text"], draft["problems"]),
                 "leir_version": draft["expected_version"]}
    return render(request, "curation/review/step.html", _context(request, step, **extra))


@role_required(Role.VIEWER)
@require_GET
def verdict(request: HttpRequest, pk: int) -> HttpResponse:
    """The verification panel with the review actions (htmx polls it while a verification is queued)."""
    step = _step(pk)
    template = "curation/review/_verdict.html" if is_htmx(request) else "curation/review/step.html"
    return render(request, template, _context(request, step))


@role_required(Role.REVIEWER)
@require_POST
def review(request: HttpRequest, pk: int) -> HttpResponse:
    """Approve, reject (with a typed reason) or skip; then on to the next step in the queue."""
    step = _step(pk)
    decision = request.POST.get("decision", "")
    strategy = request.POST.get("strategy", "")
    try:
        reviews.submit_review(request.user, step, decision=decision, reason=request.POST.get("reason", ""),
                              comment=request.POST.get("comment", ""),
                              step_version=_int(request.POST.get("version")),
                              settle=request.POST.get("settle") == "1")
    except reviews.ReviewRefused as refused:
        messages.error(request, str(refused))
        return redirect("step", pk=step.pk)
    done = {Decision.APPROVE: "Approved", Decision.REJECT: "Rejected", Decision.SKIP: "Skipped"}[decision]
    messages.success(request, f"{done} step {step.step_id[:16]} — press u to undo.")
    following = reviews.next_step_for(request.user, strategy=strategy or None)
    # the policy offers skipped steps again once nothing else is left: not straight after the skip
    if following is None or following.pk == step.pk:
        return redirect(_queue_url(strategy))
    url = reverse("step", args=[following.pk])
    return redirect(f"{url}?strategy={strategy}" if strategy else url)


@role_required(Role.REVIEWER)
@require_POST
def rerun(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue the step's verification again on the CPU workers; the panel polls until it finishes."""
    step = verification.request_verification(request.user, _step(pk))
    messages.info(request, "Verification queued.")
    if is_htmx(request):
        return render(request, "curation/review/_verdict.html", _context(request, step))
    return redirect("step", pk=step.pk)


# ---- editing -----------------------------------------------------------------------------------------

EDIT_FIELDS = ("trace_text", "after_leir")


def _conflict(request: HttpRequest, conflict: edits.EditConflict, field: str, draft: str) -> HttpResponse:
    """Keep the refused draft and send the browser to the conflict screen's GET address (303)."""
    drafts.keep(request, conflict.current.pk, field, draft, expected_version=conflict.expected_version)
    return _see_other(reverse("review-conflict", args=[conflict.current.pk, field]))


def _see_other(url: str) -> HttpResponse:
    """A 303 redirect: the browser follows it with GET, so the address bar never holds a POST URL."""
    response = HttpResponse(status=303)
    response["Location"] = url
    return response


@role_required(Role.REVIEWER)
@require_GET
def conflict_page(request: HttpRequest, pk: int, field: str) -> HttpResponse:
    """Both versions of a conflict: the current one and the reviewer's kept draft, to choose or merge."""
    if field not in EDIT_FIELDS:
        return HttpResponseBadRequest(f"unknown field {field!r}: trace_text or after_leir")
    current = _step(pk)
    draft = drafts.get(request, current.pk, field)
    if draft is None:
        messages.info(request, "No conflicting draft is waiting for this step.")
        return redirect("step", pk=current.pk)
    expected = draft["expected_version"] if draft["expected_version"] is not None else current.version
    theirs = current.trace_text if field == "trace_text" else pretty_after(current)
    changed_by = next((e for e in reversed(audit.history(current))
                       if e.field == field and e.step_version > expected), None)
    context = {"step": current, "field": field, "draft": draft["text"], "theirs": theirs,
               "changed_by": changed_by, "expected_version": expected,
               "label": "trace" if field == "trace_text" else "transformed LEIR"}
    return render(request, "curation/review/conflict.html", context)


@role_required(Role.REVIEWER)
@require_POST
def edit_trace(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the edited trace under optimistic locking; a stale version shows the conflict screen."""
    step = _step(pk)
    text = request.POST.get("trace_text", "")
    version = _int(request.POST.get("version"))
    if version is None:
        return HttpResponseBadRequest("the form lacks the step version it was read at")
    try:
        edits.edit_trace(request.user, step, expected_version=version, trace_text=text)
    except edits.EditConflict as conflict:
        return _conflict(request, conflict, "trace_text", text)
    drafts.forget(request, step.pk, "trace_text")
    messages.success(request, "Trace saved.")
    return redirect("step", pk=step.pk)


@role_required(Role.REVIEWER)
@require_POST
def edit_leir(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the edited after-state: checked now, re-verification queued, approval off until it passes."""
    step = _step(pk)
    text = request.POST.get("leir_text", "")
    version = _int(request.POST.get("version"))
    if version is None:
        return HttpResponseBadRequest("the form lacks the step version it was read at")
    try:
        edits.edit_after_leir(request.user, step, expected_version=version, leir_text=text)
    except edits.InvalidLeir as bad:
        drafts.keep(request, step.pk, "after_leir", text, expected_version=version, problems=bad.problems)
        count = len(bad.problems)
        messages.error(request, f"Not saved: the transformed LEIR has {count} problem"
                                f"{'s' if count != 1 else ''} (your text is kept in the editor).")
        return _see_other(_draft_url(step.pk, "after_leir"))
    except edits.EditConflict as conflict:
        return _conflict(request, conflict, "after_leir", text)
    drafts.forget(request, step.pk, "after_leir")
    messages.success(request, "Transformed LEIR saved; re-verification queued.")
    return redirect("step", pk=step.pk)


@role_required(Role.REVIEWER)
@require_POST
def check_leir(request: HttpRequest, pk: int) -> HttpResponse:
    """Parse and check the text being typed (the htmx live check; the "Check" button without JS)."""
    step = _step(pk)
    text = request.POST.get("leir_text", "")
    try:
        edits.check_leir(text, step.after.tensors)
        found: list[dict[str, Any]] = []
    except edits.InvalidLeir as bad:
        found = bad.problems
    if is_htmx(request):
        shown = leir_problems(text, found)
        return render(request, "curation/review/_leir_problems.html", {"problems": shown})
    # without JavaScript the Check button posts the form: show the result at a GET address
    drafts.keep(request, step.pk, "after_leir", text, expected_version=_int(request.POST.get("version")),
                problems=found)
    return _see_other(_draft_url(step.pk, "after_leir"))


@role_required(Role.REVIEWER)
@require_POST
def discard(request: HttpRequest, pk: int) -> HttpResponse:
    """In a conflict, keep their version; the reviewer's own draft goes into the step's history."""
    step = _step(pk)
    field = request.POST.get("field", "")
    try:
        edits.discard_draft(request.user, step, field=field, draft=request.POST.get("draft", ""))
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    except PermissionDenied as exc:  # pragma: no cover - role_required refuses first
        return HttpResponseForbidden(str(exc))
    drafts.forget(request, step.pk, field)
    messages.info(request, "Kept the current version; your draft is in the history panel.")
    return redirect("step", pk=step.pk)

