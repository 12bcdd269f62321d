"""Inter-reviewer agreement: Cohen's kappa per strategy, over steps two reviewers decided.

For each step the first two different reviewers' approve/reject decisions on the same version form one
pair. Kappa = (p_o − p_e) / (1 − p_e); with no chance disagreement possible (p_e = 1) it is 1.0 when they
always agreed. Steps whose pair disagreed are listed, so the dashboard can link to them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection

from curation.models import Decision, Review, Step


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


#: The pairs in SQL (window functions: PostgreSQL and SQLite ≥ 3.25): each reviewer's first approve/reject on
#: a step version, then the first two reviewers by that decision's time (``LEAD``, no self-join). One row
#: per strategy and decision pair, and per step when the pair disagreed (so the steps can be listed): a few
#: rows per strategy leave the database instead of every review.
PAIRS_SQL = """
WITH firsts AS (
  SELECT step_id, step_version, decision, created_at, id,
         ROW_NUMBER() OVER (PARTITION BY step_id, step_version, reviewer_id ORDER BY created_at, id) AS mine
  FROM {review} WHERE decision IN (%s, %s) AND adjudication = %s),
ordered AS (
  SELECT step_id, decision,
         ROW_NUMBER() OVER (PARTITION BY step_id, step_version ORDER BY created_at, id) AS nth,
         LEAD(decision) OVER (PARTITION BY step_id, step_version ORDER BY created_at, id) AS second
  FROM firsts WHERE mine = 1)
SELECT s.strategy, o.decision, o.second, CASE WHEN o.decision <> o.second THEN o.step_id END, COUNT(*)
FROM ordered o JOIN {step} s ON s.id = o.step_id
WHERE o.nth = 1 AND o.second IS NOT NULL
GROUP BY 1, 2, 3, 4
"""


def _pairs() -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[int]]]:
    """Per strategy: the decision pairs and the steps whose pair disagreed (step order)."""
    sql = PAIRS_SQL.format(review=connection.ops.quote_name(Review._meta.db_table),
                           step=connection.ops.quote_name(Step._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [Decision.APPROVE.value, Decision.REJECT.value, False])
        rows = cursor.fetchall()
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    disagreements: dict[str, set[int]] = defaultdict(set)
    for strategy, first, second, disagreeing, count in rows:
        pairs[strategy].extend([(first, second)] * count)
        if disagreeing is not None:
            disagreements[strategy].add(disagreeing)
    return pairs, {strategy: sorted(pks) for strategy, pks in disagreements.items()}


def agreement_by_strategy() -> list[Agreement]:
    """One ``Agreement`` per strategy that has at least one reviewed pair, sorted by strategy."""
    pairs, disagreements = _pairs()
    return [Agreement(s, len(p), sum(a == b for a, b in p) / len(p), cohen_kappa(p), disagreements.get(s, []))
            for s, p in sorted(pairs.items())]


def disagreeing_steps(strategy: str | None = None) -> list[int]:
    """Primary keys of the steps whose first two reviewers disagreed (of one strategy, or all)."""
    _, disagreements = _pairs()
    chosen = [disagreements.get(strategy, [])] if strategy else list(disagreements.values())
    return sorted({pk for pks in chosen for pk in pks})
