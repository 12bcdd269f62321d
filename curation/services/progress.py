"""What the pipeline has done so far, for the status page and the dashboard (a few aggregate queries)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Exists, Min, OuterRef
from django.utils import timezone

from curation.models import Export, ProgramState, Step, Workload


def workload_progress() -> dict[str, Any]:
    """Workloads, how many translated, how many of those have steps (the generation queue), exports."""
    workloads = Workload.objects.count()
    # semi-joins (EXISTS) rather than DISTINCT over a join: index probes, not a pass over every step
    has_source = Exists(ProgramState.objects.filter(workload=OuterRef("pk"), depth=0))
    translated_q = Workload.objects.filter(has_source)
    translated = translated_q.count()
    generated = translated_q.filter(Exists(Step.objects.filter(workload=OuterRef("pk")))).count()
    return {
        "workloads": workloads,
        "translated": translated,
        "generated": generated,
        "generated_fraction": generated / translated if translated else 0.0,
        "exports": Export.objects.count(),
        "seconds_left": first_pass_seconds_left(generated, translated),
    }


def first_pass_seconds_left(generated: int, translated: int) -> float | None:
    """How long until every translated workload has steps, at the rate seen since the first step was stored;
    ``None`` before there is a rate (no step yet) or when the pass is done."""
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
