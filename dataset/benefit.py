"""What a step record says about the step's worth: its effect verdict, its category and its rank.

Schema version 2 gives every record an ``effect`` block (the cost model's ``estimate``, a ``measured``
speedup with ``--time``, a ``verdict`` and a credited ``follow_up``). This module reads it defensively —
a record without one (an older dataset, or a generation without effects) has verdict ``unknown`` — so the
filtering policy and the renderer decide by benefit where they can and keep their old behaviour where
they cannot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dataset.effects import best_speedup

VERDICTS = ("faster", "slower", "neutral", "unknown")
#: Categories in the order the filter reports them: kept as positives, capped, negatives, old behaviour.
CATEGORIES = ("faster", "enabling", "neutral", "slower", "failed", "unknown")


def effect(record: Mapping[str, Any]) -> Mapping[str, Any]:
    block = record.get("effect")
    return block if isinstance(block, Mapping) else {}


def verdict(record: Mapping[str, Any]) -> str:
    """``faster``, ``slower``, ``neutral`` or ``unknown`` (no effect block, or no verdict in it)."""
    value = effect(record).get("verdict")
    return value if value in VERDICTS else "unknown"


def credited(record: Mapping[str, Any]) -> bool:
    """Whether the step is credited for enabling a verified, faster follow-up in its chain."""
    return bool(effect(record).get("follow_up"))


def category(record: Mapping[str, Any]) -> str:
    """Where the filter puts a record: ``failed`` first, then a faster verdict, then a credited enabling
    step, then the verdict itself (``neutral``, ``slower``, or ``unknown`` without an effect)."""
    if record.get("status") == "failed":
        return "failed"
    kind = verdict(record)
    if kind == "faster":
        return "faster"
    if credited(record):
        return "enabling"
    return kind


def speedup(record: Mapping[str, Any]) -> float | None:
    """The rank's number: the measured speedup over the parent when there is one, else the estimate's."""
    return best_speedup(effect(record))


def has_effects(records: Any) -> bool:
    """Whether any record of a group carries a verdict: only then is the group ranked by benefit."""
    return any(verdict(r) != "unknown" or speedup(r) is not None for r in records)
