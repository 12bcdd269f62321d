"""Dataset balance: the filtering policy of STRATEGIES.md as a declared, seeded object.

A policy keeps only records of the accepted statuses (verified steps by default), then per strategy
draws a keep decision for each record and caps what survives. The draw is a uniform number derived from
``(seed, step_id)`` alone, and a cap keeps the records with the smallest draws, so the kept set does not
depend on the order of the input file or on what else it holds; the output keeps the input order.

Selection by benefit (``by_benefit``, on in ``DEFAULT``) reads each record's ``effect``
(``dataset.benefit``): beneficial steps (verdict ``faster``) and credited enabling steps (a verified,
faster ``follow_up``) are kept, up to the strategy's cap; neutral steps are capped so they are at most
``neutral_share`` of what is kept; harmful steps (``slower``) and failed steps go to ``negatives`` only — a
separate list for preference data, never in the SFT set. A record without an effect (verdict
``unknown``: an older dataset) is balanced as before:

``DEFAULT`` follows the public dataset: at most 250 examples per strategy; the 13 trivially-gameable
algebraic/inverse strategies are strongly down-sampled (keep 10 %, at most 25); the 13 most frequent
"easy" ones are kept at half rate up to 125; the rest are kept whole up to the cap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dataset.benefit import CATEGORIES, category
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
    #: Decide by each record's effect (records without one are balanced by the groups as before).
    by_benefit: bool = False
    #: Neutral steps (no gain, no credited follow-up) kept: at most this share of everything kept.
    neutral_share: float = 0.1

    def rule(self, strategy: str) -> tuple[str, float, int | None]:
        """(group name, keep probability, cap) for one strategy."""
        for group in self.groups:
            if strategy in group.strategies:
                return group.name, group.keep, group.cap
        return "other", self.default_keep, self.default_cap

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "default_keep": self.default_keep, "default_cap": self.default_cap,
                "statuses": list(self.statuses), "by_benefit": self.by_benefit,
                "neutral_share": self.neutral_share,
                "groups": [{"name": g.name, "strategies": list(g.strategies), "keep": g.keep, "cap": g.cap}
                           for g in self.groups]}


DEFAULT = FilterPolicy(
    "default",
    groups=(Group("trivially_gameable", TRIVIALLY_GAMEABLE, keep=0.1, cap=25),
            Group("easy", EASY, keep=0.5, cap=125)),
    description=("by benefit: faster and credited enabling steps kept (cap 250 per strategy), neutral "
                 "ones at most 10 % of the kept set, slower and failed ones only as negatives; records "
                 "without an effect as STRATEGIES.md: cap 250 per strategy, gameable 13 at 10 % (<= 25), "
                 "easy 13 at 50 % (<= 125)"),
    by_benefit=True,
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
    #: Harmful (slower) and failed steps, for preference data only (input order); never in ``kept``.
    negatives: list[Mapping[str, Any]] = field(default_factory=list)
    #: Per strategy, how many records of each effect category (``dataset.benefit.CATEGORIES``).
    effects_before: dict[str, dict[str, int]] = field(default_factory=dict)
    effects_after: dict[str, dict[str, int]] = field(default_factory=dict)


def _smallest(drawn: list[tuple[float, int]], cap: int | None) -> list[int]:
    drawn.sort()
    return [index for _u, index in (drawn if cap is None else drawn[:cap])]


def _balanced(records: Sequence[Mapping[str, Any]], candidates: list[int], policy: FilterPolicy,
              seed: int) -> set[int]:
    """The group rules: a seeded keep draw per record, then the strategy's cap (smallest draws)."""
    by_strategy: dict[str, list[tuple[float, int]]] = {}
    for index in candidates:
        record = records[index]
        u = draw(seed, record["step_id"])
        _group, keep, _cap = policy.rule(record["strategy"])
        if u < keep:
            by_strategy.setdefault(record["strategy"], []).append((u, index))
    kept: set[int] = set()
    for strategy, drawn in by_strategy.items():
        kept.update(_smallest(drawn, policy.rule(strategy)[2]))
    return kept


def _capped(records: Sequence[Mapping[str, Any]], candidates: list[int], cap: int | None,
            seed: int) -> set[int]:
    """Every candidate, at most ``cap`` per strategy (smallest draws)."""
    by_strategy: dict[str, list[tuple[float, int]]] = {}
    for index in candidates:
        by_strategy.setdefault(records[index]["strategy"], []).append((draw(seed, records[index]["step_id"]),
                                                                      index))
    kept: set[int] = set()
    for drawn in by_strategy.values():
        kept.update(_smallest(drawn, cap))
    return kept


def effect_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per strategy (catalogue order), the number of records in each effect category."""
    counts: dict[str, dict[str, int]] = {name: {} for name in strategy_counts(records)}
    for record in records:
        row = counts[str(record.get("strategy"))]
        kind = category(record)
        row[kind] = row.get(kind, 0) + 1
    return counts


def apply_policy(records: Sequence[Mapping[str, Any]], policy: FilterPolicy, seed: int = 0) -> FilterResult:
    """The kept records and the negatives (input order), with the per-strategy counts before and after."""
    unknown: list[int] = []
    beneficial: list[int] = []
    neutral: list[int] = []
    negatives: list[int] = []
    for index, record in enumerate(records):
        kind = category(record) if policy.by_benefit else "unknown"
        if kind in ("slower", "failed"):
            negatives.append(index)
        elif record.get("status") not in policy.statuses:
            continue
        elif kind in ("faster", "enabling"):
            beneficial.append(index)
        elif kind == "neutral":
            neutral.append(index)
        else:
            unknown.append(index)
    kept_indices = _balanced(records, unknown, policy, seed) | _capped(records, beneficial,
                                                                        policy.default_cap, seed)
    if neutral:
        share = min(max(policy.neutral_share, 0.0), 0.99)
        allowed = int(len(kept_indices) * share / (1 - share))
        drawn = [(draw(seed, records[i]["step_id"]), i) for i in neutral]
        kept_indices.update(_smallest(drawn, allowed))
    kept = [records[i] for i in sorted(kept_indices)]
    return FilterResult(kept, before=strategy_counts(records), after=strategy_counts(kept),
                        negatives=[records[i] for i in negatives], effects_before=effect_counts(records),
                        effects_after=effect_counts(kept))


def distribution_table(result: FilterResult, policy: FilterPolicy) -> str:
    """A plain-text table: strategy, group, records before, kept after."""
    rows = [f"{'strategy':32} {'group':20} {'before':>8} {'after':>8}"]
    for name in result.before:
        group = policy.rule(name)[0]
        rows.append(f"{name:32} {group:20} {result.before[name]:8d} {result.after.get(name, 0):8d}")
    rows.append(f"{'total':32} {'':20} {sum(result.before.values()):8d} {sum(result.after.values()):8d}")
    return "\n".join(rows)


def effects_table(result: FilterResult) -> str:
    """Per strategy and in total, each effect category as ``before>after`` (kept), and the negatives."""
    columns = " ".join(f"{c:>11}" for c in CATEGORIES)
    rows = [f"{'effects (before>kept)':32} {columns} {'negatives':>9}"]
    negatives = effect_counts(result.negatives)
    totals_before: dict[str, int] = {}
    totals_after: dict[str, int] = {}
    for name, before in result.effects_before.items():
        after = result.effects_after.get(name, {})
        cells = []
        for c in CATEGORIES:
            totals_before[c] = totals_before.get(c, 0) + before.get(c, 0)
            totals_after[c] = totals_after.get(c, 0) + after.get(c, 0)
            cells.append(f"{before.get(c, 0)}>{after.get(c, 0)}".rjust(11))
        rows.append(f"{name:32} " + " ".join(cells) + f" {sum(negatives.get(name, {}).values()):9d}")
    cells = [f"{totals_before.get(c, 0)}>{totals_after.get(c, 0)}".rjust(11) for c in CATEGORIES]
    rows.append(f"{'total':32} " + " ".join(cells) + f" {len(result.negatives):9d}")
    return "\n".join(rows)
