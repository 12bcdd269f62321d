"""Dataset balance: the filtering policy of STRATEGIES.md as a declared, seeded object.

A policy keeps only records of the accepted statuses (verified steps by default), then per strategy
draws a keep decision for each record and caps what survives. The draw is a uniform number derived from
``(seed, step_id)`` alone, and a cap keeps the records with the smallest draws, so the kept set does not
depend on the order of the input file or on what else it holds; the output keeps the input order.

``DEFAULT`` follows the public dataset: at most 250 examples per strategy; the 13 trivially-gameable
algebraic/inverse strategies are strongly down-sampled (keep 10 %, at most 25); the 13 most frequent
"easy" ones are kept at half rate up to 125; the rest are kept whole up to the cap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dataset.records import strategy_counts

TRIVIALLY_GAMEABLE = (
    "operator_fission", "factorization", "expand_factorization", "cancellation", "expand_cancellation",
    "apart", "together", "powsimp", "expand_powsimp", "logsimp", "expand_log", "collect", "expand_collect",
)
EASY = (
    "operator_fusion", "compute_inline", "expression_splitting", "expression_reorder", "loop_reorder",
    "loop_unrolling", "loop_parallelization", "loop_vectorization", "loop_binding", "set_storage_layout",
    "exponential_split", "multiplicative_split", "additive_split",
)


@dataclass(frozen=True)
class Group:
    """Strategies treated alike: each keeps a record with probability ``keep``, at most ``cap`` of them."""

    name: str
    strategies: tuple[str, ...]
    keep: float
    cap: int | None


@dataclass(frozen=True)
class FilterPolicy:
    name: str
    groups: tuple[Group, ...] = ()
    #: For strategies in no group.
    default_keep: float = 1.0
    default_cap: int | None = 250
    statuses: tuple[str, ...] = ("verified",)
    description: str = ""

    def rule(self, strategy: str) -> tuple[str, float, int | None]:
        """(group name, keep probability, cap) for one strategy."""
        for group in self.groups:
            if strategy in group.strategies:
                return group.name, group.keep, group.cap
        return "other", self.default_keep, self.default_cap

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "default_keep": self.default_keep, "default_cap": self.default_cap,
                "statuses": list(self.statuses),
                "groups": [{"name": g.name, "strategies": list(g.strategies), "keep": g.keep, "cap": g.cap}
                           for g in self.groups]}


DEFAULT = FilterPolicy(
    "default",
    groups=(Group("trivially_gameable", TRIVIALLY_GAMEABLE, keep=0.1, cap=25),
            Group("easy", EASY, keep=0.5, cap=125)),
    description="STRATEGIES.md: cap 250 per strategy, gameable 13 at 10 % (<= 25), easy 13 at 50 % (<= 125)",
)
#: Every verified step, no sampling: what reviewers see before balancing.
ALL_VERIFIED = FilterPolicy("all", default_cap=None, description="every verified step")
POLICIES: dict[str, FilterPolicy] = {p.name: p for p in (DEFAULT, ALL_VERIFIED)}


def get_policy(name: str) -> FilterPolicy:
    try:
        return POLICIES[name]
    except KeyError:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None


def draw(seed: int, step_id: str) -> float:
    """A uniform number in [0, 1) fixed by the seed and the step."""
    digest = hashlib.sha256(f"{seed}|{step_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class FilterResult:
    kept: list[Mapping[str, Any]]
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)


def apply_policy(records: Sequence[Mapping[str, Any]], policy: FilterPolicy, seed: int = 0) -> FilterResult:
    """The kept records (input order) and the per-strategy counts before and after."""
    eligible = [(i, r) for i, r in enumerate(records) if r.get("status") in policy.statuses]
    by_strategy: dict[str, list[tuple[float, int]]] = {}
    for index, record in eligible:
        u = draw(seed, record["step_id"])
        _group, keep, _cap = policy.rule(record["strategy"])
        if u < keep:
            by_strategy.setdefault(record["strategy"], []).append((u, index))
    kept_indices: set[int] = set()
    for strategy, drawn in by_strategy.items():
        cap = policy.rule(strategy)[2]
        drawn.sort()
        kept_indices.update(index for _u, index in (drawn if cap is None else drawn[:cap]))
    kept = [records[i] for i in sorted(kept_indices)]
    return FilterResult(kept, before=strategy_counts(records), after=strategy_counts(kept))


def distribution_table(result: FilterResult, policy: FilterPolicy) -> str:
    """A plain-text table: strategy, group, records before, kept after."""
    rows = [f"{'strategy':32} {'group':20} {'before':>8} {'after':>8}"]
    for name in result.before:
        group = policy.rule(name)[0]
        rows.append(f"{name:32} {group:20} {result.before[name]:8d} {result.after.get(name, 0):8d}")
    rows.append(f"{'total':32} {'':20} {sum(result.before.values()):8d} {sum(result.after.values()):8d}")
    return "\n".join(rows)
