"""What the pipeline has done so far, for the status page and the dashboard (a few aggregate queries)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Exists, Min, OuterRef, Q
from django.utils import timezone

from curation.models import Export, GenerationStatus, ProgramState, Step, Workload


def workload_progress() -> dict[str, Any]:
    """Workloads, how many translated, how many of those have steps (the generation queue), exports."""
    workloads = Workload.objects.count()
    # semi-joins (EXISTS) rather than DISTINCT over a join: index probes, not a pass over every step
    has_source = Exists(ProgramState.objects.filter(workload=OuterRef("pk"), depth=0))
    translated_q = Workload.objects.filter(has_source)
    translated = translated_q.count()
    has_steps = Exists(Step.objects.filter(workload=OuterRef("pk")))
    generated = translated_q.filter(has_steps).count()
    # the first pass is over for a workload with steps, and for one whose generation ended without any
    # (failed, or no step applied): otherwise the estimate would never go away
    ended = [GenerationStatus.DONE, GenerationStatus.FAILED]
    finished = translated_q.filter(has_steps | Q(generation_status__in=ended)).count()
    return {
        "workloads": workloads,
        "translated": translated,
        "generated": generated,
        "generated_fraction": generated / translated if translated else 0.0,
        "exports": Export.objects.count(),
        "seconds_left": first_pass_seconds_left(finished, translated),
    }


def first_pass_seconds_left(generated: int, translated: int) -> float | None:
    """How long until every translated workload is through its first generation (``generated`` of them
    are), at the rate seen since the first step was stored; ``None`` before there is a rate (no step yet)
    or when the pass is done."""
    if not generated or generated >= translated:
        return None
    first = Step.objects.aggregate(first=Min("created_at"))["first"]
    elapsed = (timezone.now() - first).total_seconds() if first else 0.0
    if elapsed <= 0:
        return None
    return (translated - generated) * elapsed / generated


def pipeline_progress() -> dict[str, Any]:
    progress = workload_progress()
    by_verification = dict(Step.objects.values_list("verification_status").annotate(n=Count("id")))
    by_review = dict(Step.objects.values_list("review_status").annotate(n=Count("id")))
    return {
        **progress,
        "steps": sum(by_verification.values()),
        "by_verification": dict(sorted(by_verification.items())),
        "by_review": dict(sorted(by_review.items())),
    }
