"""What the pipeline has done so far, for the status page and the dashboard (a few aggregate queries)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from curation.models import Export, Step, Workload


def pipeline_progress() -> dict[str, Any]:
    workloads = Workload.objects.count()
    translated = Workload.objects.filter(states__depth=0).distinct().count()
    generated = Workload.objects.filter(steps__isnull=False).distinct().count()
    by_verification = dict(Step.objects.values_list("verification_status").annotate(n=Count("id")))
    by_review = dict(Step.objects.values_list("review_status").annotate(n=Count("id")))
    steps = sum(by_verification.values())
    return {
        "workloads": workloads,
        "translated": translated,
        "generated": generated,
        "generated_fraction": generated / translated if translated else 0.0,
        "steps": steps,
        "by_verification": dict(sorted(by_verification.items())),
        "by_review": dict(sorted(by_review.items())),
        "exports": Export.objects.count(),
    }
