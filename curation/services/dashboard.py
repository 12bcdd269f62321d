"""The dashboard's figures: where the dataset stands, computed in a handful of grouped queries.

One grouped query over the steps (strategy × strategy level × workload × both statuses, no join) gives
the status counts, the strategy × workload-level heat maps and the pass rates; one over the reviews gives
each reviewer's progress. Everything else is small tables. At 100,000 steps this stays a few tens of
milliseconds on PostgreSQL, so the page needs no cache that could show stale numbers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Max, Q

from curation.models import Decision, Review, ReviewStatus, Step, VerificationStatus, Workload
from curation.services.agreement import Agreement, agreement_by_strategy
from curation.services.progress import workload_progress

#: Statuses that mean the verification finished with the program accepted.
VERIFIED = frozenset({VerificationStatus.PASS, VerificationStatus.EQUAL_PASS})
#: Statuses of steps still waiting for the verification queue.
WAITING = frozenset({VerificationStatus.PENDING, VerificationStatus.QUEUED})


@dataclass
class HeatMap:
    """Counts per strategy (rows, catalogue order) and workload level (columns); ``max`` scales colour."""

    title: str
    columns: list[int]
    rows: list[dict[str, Any]]
    column_totals: list[int]
    total: int
    max: int


@dataclass
class PassRate:
    strategy: str
    level: str
    steps: int
    decided: int
    passed: int
    equal_passed: int
    failed: int
    errors: int
    waiting: int

    @property
    def pass_rate(self) -> float | None:
        """Accepted (pass or equal pass) among the verifications that finished; None before any did."""
        return (self.passed + self.equal_passed) / self.decided if self.decided else None

    @property
    def equal_pass_rate(self) -> float | None:
        return self.equal_passed / self.decided if self.decided else None


@dataclass
class ReviewerProgress:
    reviewer: str
    reviews: int
    steps: int
    approved: int
    rejected: int
    skipped: int
    open_assigned: int
    last: Any = None

    @property
    def done_fraction(self) -> float:
        """Reviewed steps among the reviewed plus still-assigned ones (1.0 when nothing is left)."""
        total = self.steps + self.open_assigned
        return self.steps / total if total else 1.0


@dataclass
class Dashboard:
    steps: int
    by_verification: dict[str, int]
    by_review: dict[str, int]
    verified_heat: HeatMap
    approved_heat: HeatMap
    pass_rates: list[PassRate]
    reviewers: list[ReviewerProgress]
    agreement: list[Agreement]
    progress: dict[str, Any]
    queues: list[dict[str, Any]] = field(default_factory=list)


def _strategy_catalogue() -> dict[str, str]:
    """Every registered strategy → its level, in catalogue order (rows without steps show the gaps)."""
    from strategies import all_strategies

    return {s.name: s.level.value for s in all_strategies()}


def _heat(title: str, cells: dict[tuple[str, int], int], strategies: dict[str, str],
          columns: list[int]) -> HeatMap:
    peak = max(cells.values(), default=0)
    rows = []
    for name, level in strategies.items():
        values = [cells.get((name, column), 0) for column in columns]
        rows.append({"strategy": name, "level": level, "total": sum(values),
                     "cells": [{"value": v, "style": heat_style(v, peak)} for v in values]})
    totals = [sum(cells.get((name, column), 0) for name in strategies) for column in columns]
    return HeatMap(title, columns, rows, totals, sum(totals), peak)


def heat_style(value: int, peak: int) -> str:
    """Inline background for a heat-map cell: white for 0, darker blue for more (dark text stays AA)."""
    if not value or not peak:
        return "background:#fff"
    lightness = 96 - round(36 * value / peak)  # 96% … 60%: black text keeps ≥ 4.5:1 contrast
    return f"background:hsl(217,90%,{lightness}%)"


def _reviewers() -> list[ReviewerProgress]:
    reviews = (Review.objects.order_by().values("reviewer_id", "reviewer__username")
               .annotate(reviews=Count("id"), steps=Count("step_id", distinct=True),
                         approved=Count("id", filter=Q(decision=Decision.APPROVE)),
                         rejected=Count("id", filter=Q(decision=Decision.REJECT)),
                         skipped=Count("id", filter=Q(decision=Decision.SKIP)),
                         last=Max("created_at")))
    open_statuses = [ReviewStatus.UNREVIEWED, ReviewStatus.IN_REVIEW]
    assigned = dict(Step.assigned_to.through.objects.filter(step__review_status__in=open_statuses)
                    .order_by().values_list("user_id").annotate(n=Count("id")))
    people: dict[int, ReviewerProgress] = {}
    for row in reviews:
        people[row["reviewer_id"]] = ReviewerProgress(
            row["reviewer__username"], row["reviews"], row["steps"], row["approved"], row["rejected"],
            row["skipped"], assigned.get(row["reviewer_id"], 0), row["last"])
    missing = set(assigned) - set(people)
    if missing:
        from django.contrib.auth import get_user_model

        for pk, name in get_user_model().objects.filter(pk__in=missing).values_list("pk", "username"):
            people[pk] = ReviewerProgress(name, 0, 0, 0, 0, 0, assigned[pk])
    return sorted(people.values(), key=lambda p: p.reviewer)


def _queues(progress: dict[str, Any], by_verification: dict[str, int], steps: int) -> list[dict[str, Any]]:
    waiting = sum(by_verification.get(s, 0) for s in WAITING)
    return [
        {"name": "generation", "done": progress["generated"], "total": progress["translated"],
         "unit": "translated workloads with steps",
         "left": progress["translated"] - progress["generated"]},
        {"name": "verification", "done": steps - waiting, "total": steps, "unit": "steps verified",
         "left": waiting},
    ]


def dashboard() -> Dashboard:
    """Everything the dashboard shows, from the database as it is now."""
    grouped = (Step.objects.order_by()
               .values_list("strategy", "level", "workload_id", "verification_status", "review_status")
               .annotate(n=Count("*")))  # COUNT(*), not COUNT(id): answered from step_dashboard_idx alone
    workload_level = dict(Workload.objects.values_list("id", "level"))
    strategies = _strategy_catalogue()
    by_verification: Counter[str] = Counter()
    by_review: Counter[str] = Counter()
    verified: Counter[tuple[str, int]] = Counter()
    approved: Counter[tuple[str, int]] = Counter()
    per_strategy: dict[str, Counter[str]] = defaultdict(Counter)
    for strategy, level, workload_id, verification, review, n in grouped:
        strategies.setdefault(strategy, level)
        by_verification[verification] += n
        by_review[review] += n
        per_strategy[strategy][verification] += n
        column = workload_level.get(workload_id, 0)
        if verification in VERIFIED:
            verified[(strategy, column)] += n
            if review == ReviewStatus.APPROVED:
                approved[(strategy, column)] += n
    columns = sorted(set(workload_level.values()) | {c for _, c in verified})
    rates = []
    for name, level in strategies.items():
        counts = per_strategy.get(name, Counter())
        finished = sum(n for status, n in counts.items() if status not in WAITING)
        rates.append(PassRate(name, level, sum(counts.values()), finished, counts[VerificationStatus.PASS],
                              counts[VerificationStatus.EQUAL_PASS], counts[VerificationStatus.FAIL],
                              counts[VerificationStatus.ERROR], sum(counts[s] for s in WAITING)))
    steps = sum(by_verification.values())
    # the workload-level figures only: the step counts come from the grouped query above
    progress = {**workload_progress(), "steps": steps}
    return Dashboard(
        steps=steps,
        by_verification={s.value: by_verification.get(s.value, 0) for s in VerificationStatus},
        by_review={s.value: by_review.get(s.value, 0) for s in ReviewStatus},
        verified_heat=_heat("Verified steps", verified, strategies, columns),
        approved_heat=_heat("Verified and approved steps", approved, strategies, columns),
        pass_rates=[r for r in rates if r.steps],
        reviewers=_reviewers(),
        agreement=agreement_by_strategy(),
        progress=progress,
        queues=_queues(progress, by_verification, steps),
    )


def chart_data(board: Dashboard) -> dict[str, Any]:
    """The figures the charts draw (the same numbers as the tables beside them), for ``json_script``."""
    return {
        "verification": {"labels": [VerificationStatus(s).label for s in board.by_verification],
                         "values": list(board.by_verification.values())},
        "review": {"labels": [ReviewStatus(s).label for s in board.by_review],
                   "values": list(board.by_review.values())},
        "passRates": {"labels": [r.strategy for r in board.pass_rates],
                      "pass": [round(100 * (r.pass_rate or 0), 1) for r in board.pass_rates],
                      "equalPass": [round(100 * (r.equal_pass_rate or 0), 1) for r in board.pass_rates]},
    }
