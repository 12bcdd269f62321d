"""Multi-step evaluation: the best speedup each algorithm reaches within a verification budget.

For every (workload, algorithm) one search runs at the largest budget and records, through the search's
``progress`` hook, the best speedup over the source after each verification. The best within a smaller
budget ``b`` is read off that series at ``b``: the algorithms use the budget only as a stop test, so the
first ``b`` verifications of a long run are exactly what a run with budget ``b`` would do (with a
deterministic policy) — one run per pair gives the whole speedup-vs-budget curve. One exception, on the
safe side: a reading that would make a new best is timed twice (``Search._confirm``), the pair counted as
two verifications and recorded once, after both; a run whose budget ends between them would keep the
unconfirmed reading, which the series does not credit.

Per algorithm and budget: mean, median, max and geometric mean of the best speedups over the workloads,
and fast_1 (KernelBench): the fraction of workloads whose best state beats PyTorch eager on this machine.
Eager is timed once per workload, against the source program in one job (``eager_ratio`` = source time
is how many times eager's), so best-vs-eager at any budget is ``best(b) * eager_ratio``; workloads
without a PyTorch module (``.leir`` files) have no ratio and are left out of fast_1.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tuner.search import Search

#: One point per verification: (verifications used, best speedup over the source so far).
Series = list[tuple[int, float]]

CSV_COLUMNS = ("algorithm", "budget", "workloads", "mean", "median", "max", "geomean", "fast_1",
               "fast_1_of")


@dataclass
class Curve:
    """One search: the workload, the algorithm, its best-speedup series and eager's ratio (if timed)."""

    workload: str
    algorithm: str
    series: Series = field(default_factory=lambda: [(0, 1.0)])
    eager_ratio: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "algorithm": self.algorithm, "eager_ratio": self.eager_ratio,
                "series": [list(point) for point in self.series]}


def best_at(series: Series, budget: int) -> float:
    """The best speedup after at most ``budget`` verifications (1.0, the source, before any)."""
    best = 1.0
    for used, value in series:
        if used > budget:
            break
        best = max(best, value)
    return best


def recorder(curve: Curve) -> Callable[[Search], None]:
    """A ``Search`` progress hook appending (verifications, best speedup) whenever a verification ends."""

    def hook(search: Search) -> None:
        used = search.usage.verifications
        if used > curve.series[-1][0]:
            curve.series.append((used, float(search.best.speedup)))

    return hook


def geomean(values: Sequence[float]) -> float | None:
    positive = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, positive)) / len(positive)) if positive else None


def summarize(curves: Iterable[Curve], budgets: Sequence[int]) -> list[dict[str, Any]]:
    """One row per (algorithm, budget), algorithms in first-seen order, budgets ascending."""
    by_algorithm: dict[str, list[Curve]] = {}
    for curve in curves:
        by_algorithm.setdefault(curve.algorithm, []).append(curve)
    rows = []
    for algorithm, chosen in by_algorithm.items():
        for budget in sorted(budgets):
            best = [best_at(c.series, budget) for c in chosen]
            timed = [(b, c.eager_ratio) for b, c in zip(best, chosen, strict=True) if c.eager_ratio]
            rows.append({"algorithm": algorithm, "budget": budget, "workloads": len(best),
                         "mean": statistics.fmean(best), "median": statistics.median(best),
                         "max": max(best), "geomean": geomean(best),
                         "fast_1": (sum(1 for b, r in timed if b * r > 1.0) / len(timed)) if timed else None,
                         "fast_1_of": len(timed)})
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """The summary as CSV (fixed columns, 4 decimals: the same rows give the same bytes)."""
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow([_cell(row[c]) for c in CSV_COLUMNS])
    return path


def evaluate_multi(sources: Sequence[Any], algorithms: Sequence[str], budgets: Sequence[int], *,
                   make_policy: Callable[[Any], Any], make_measurer: Callable[[Any], Any],
                   eager_ratio: Callable[[Any], float | None] | None = None,
                   options: Mapping[str, Mapping[str, Any]] | None = None, seed: int = 0, branch: int = 8,
                   max_depth: int = 8, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run every algorithm on every source at ``max(budgets)`` verifications; the curves and the summary.

    ``make_policy(source)`` and ``make_measurer(source)`` give a fresh policy and ``Measurer`` per run
    (closed here); ``eager_ratio(source)`` times eager against the source once per workload.
    """
    from tuner.run import tune
    from tuner.search import ALGORITHMS, Budget

    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise ValueError(f"unknown algorithm(s) {unknown}; known: {', '.join(ALGORITHMS)}")
    if not budgets or min(budgets) < 1:
        raise ValueError("budgets are positive verification counts, e.g. 4,8,16")
    top = max(budgets)
    curves: list[Curve] = []
    for source in sources:
        name = source.info.workload or source.info.id
        ratio = eager_ratio(source) if eager_ratio is not None else None
        for algorithm in algorithms:
            curve = Curve(name, algorithm, eager_ratio=ratio)
            measurer = make_measurer(source)
            try:
                tune(source, make_policy(source), measurer, Budget(verifications=top), algo=algorithm,
                     seed=seed, branch=branch, max_depth=max_depth,
                     options=dict((options or {}).get(algorithm, {})), progress=recorder(curve))
            finally:
                measurer.close()
            curves.append(curve)
            if progress is not None:
                progress(f"{name} {algorithm}: best {curve.series[-1][1]:.3f}x after "
                         f"{curve.series[-1][0]} verification(s)")
    return {"budgets": sorted(budgets), "curves": [c.to_json() for c in curves],
            "summary": summarize(curves, budgets)}
