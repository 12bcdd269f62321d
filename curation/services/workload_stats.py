"""Per-workload figures for the workloads list: states, steps, verified and approved steps, best speedup.

Grouped queries restricted to the workloads on the page (no join of steps to workloads, no per-row
query), so a list page costs the same at 100 steps as at 100,000.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Max, Q

from curation.models import ProgramState, ReviewStatus, Step, Verification, VerificationStatus, Workload


@dataclass
class WorkloadFigures:
    states: int = 0
    steps: int = 0
    verified: int = 0
    approved: int = 0
    best_speedup: float | None = None


def workload_figures(workloads: Iterable[Workload]) -> dict[int, WorkloadFigures]:
    """Figures for each given workload, keyed by its primary key (zeros for one without steps)."""
    ids = [w.pk for w in workloads]
    figures = {pk: WorkloadFigures() for pk in ids}
    accepted = [VerificationStatus.PASS, VerificationStatus.EQUAL_PASS]
    # COUNT(workload_id), a column of step_dashboard_idx: answered from the index, not the step rows
    steps = (Step.objects.filter(workload_id__in=ids).order_by().values_list("workload_id")
             .annotate(total=Count("*"),
                       verified=Count("workload_id", filter=Q(verification_status__in=accepted)),
                       approved=Count("workload_id", filter=Q(verification_status__in=accepted,
                                                              review_status=ReviewStatus.APPROVED))))
    for pk, total, verified, approved in steps:
        figures[pk].steps, figures[pk].verified, figures[pk].approved = total, verified, approved
    for pk, count in (ProgramState.objects.filter(workload_id__in=ids).order_by().values_list("workload_id")
                      .annotate(n=Count("id"))):
        figures[pk].states = count
    for pk, best in (Verification.objects.filter(state__workload_id__in=ids, step__isnull=False).order_by()
                     .values_list("state__workload_id").annotate(best=Max("speedup_vs_source"))):
        figures[pk].best_speedup = best
    return figures
