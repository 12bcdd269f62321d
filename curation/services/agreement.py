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


def _pairs() -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[int]]]:
    """Per strategy: the decision pairs and the steps whose pair disagreed (plain rows, no model objects)."""
    reviews = (Review.objects.filter(decision__in=[Decision.APPROVE, Decision.REJECT], adjudication=False)
               .order_by("step_id", "created_at", "id")
               .values_list("step_id", "step_version", "reviewer_id", "decision", "step__strategy"))
    first_two: dict[tuple[int, int], list[tuple[int, str, str]]] = defaultdict(list)
    for step_id, version, reviewer_id, decision, strategy in reviews:
        chosen = first_two[(step_id, version)]
        if len(chosen) < 2 and all(r != reviewer_id for r, _, _ in chosen):
            chosen.append((reviewer_id, decision, strategy))
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    disagreements: dict[str, list[int]] = defaultdict(list)
    for (step_id, _), chosen in first_two.items():
        if len(chosen) == 2:
            (_, first, strategy), (_, second, _) = chosen
            pairs[strategy].append((first, second))
            if first != second and step_id not in disagreements[strategy]:
                disagreements[strategy].append(step_id)
    return pairs, disagreements


def agreement_by_strategy() -> list[Agreement]:
    """One ``Agreement`` per strategy that has at least one reviewed pair, sorted by strategy."""
    pairs, disagreements = _pairs()
    return [Agreement(s, len(p), sum(a == b for a, b in p) / len(p), cohen_kappa(p), disagreements[s])
            for s, p in sorted(pairs.items())]


def disagreeing_steps(strategy: str | None = None) -> list[int]:
    """Primary keys of the steps whose first two reviewers disagreed (of one strategy, or all)."""
    _, disagreements = _pairs()
    chosen = [disagreements.get(strategy, [])] if strategy else list(disagreements.values())
    return sorted({pk for pks in chosen for pk in pks})
