"""Inter-reviewer agreement: Cohen's kappa per strategy, over steps two reviewers decided.

For each step the first two different reviewers' approve/reject decisions on the same version form one
pair. Kappa = (p_o − p_e) / (1 − p_e); with no chance disagreement possible (p_e = 1) it is 1.0 when they
always agreed. Steps whose pair disagreed are listed, so the dashboard can link to them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from curation.models import Decision, Review


@dataclass
class Agreement:
    strategy: str
    pairs: int
    observed: float
    kappa: float | None
    disagreements: list[int] = field(default_factory=list)


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' labels; ``None`` without pairs."""
    if not pairs:
        return None
    n = len(pairs)
    labels = sorted({label for pair in pairs for label in pair})
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == lab for a, _ in pairs) / n) * (sum(b == lab for _, b in pairs) / n)
                   for lab in labels)
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def agreement_by_strategy() -> list[Agreement]:
    """One ``Agreement`` per strategy that has at least one reviewed pair, sorted by strategy."""
    reviews = (Review.objects.filter(decision__in=[Decision.APPROVE, Decision.REJECT], adjudication=False)
               .select_related("step").order_by("step_id", "created_at", "id"))
    first_two: dict[tuple[int, int], list[Review]] = defaultdict(list)
    for review in reviews:
        key = (review.step_id, review.step_version)
        chosen = first_two[key]
        if len(chosen) < 2 and all(r.reviewer_id != review.reviewer_id for r in chosen):
            chosen.append(review)
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    disagreements: dict[str, list[int]] = defaultdict(list)
    for (step_id, _), chosen in first_two.items():
        if len(chosen) == 2:
            strategy = chosen[0].step.strategy
            pairs[strategy].append((chosen[0].decision, chosen[1].decision))
            if chosen[0].decision != chosen[1].decision:
                disagreements[strategy].append(step_id)
    return [Agreement(s, len(p), sum(a == b for a, b in p) / len(p), cohen_kappa(p), disagreements[s])
            for s, p in sorted(pairs.items())]
