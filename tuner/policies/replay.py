"""``ReplayPolicy``: proposes, for a state, the steps a recorded run took from it, in recorded order.

Reads step records (``dataset.records``; a ``steptp tune`` run or a generated dataset). For each
state it re-applies the recorded strategy, site and parameters through the engine, so a replay checks
that today's engine still produces the recorded child (a mismatch is a failed proposal, not a silent
divergence). Verified records come first; failed ones are replayed too, which reproduces a run's failures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dataset.records import load_records
from leir.ast import Program
from leir.errors import LeirError
from leir.program import program_hash
from strategies.base import StrategyError
from strategies.engine import apply_strategy
from tuner.proposals import Proposal, SearchContext


class ReplayPolicy:
    name = "replay"

    def __init__(self, records: Iterable[Mapping[str, Any]] | str | Path, *, include_failed: bool = False):
        if isinstance(records, str | Path):
            self.path: str | None = str(records)
            records = list(load_records(records))
        else:
            self.path = None
        self.by_parent: dict[str, list[Mapping[str, Any]]] = {}
        for record in records:
            if record.get("site") is None or (record["status"] == "failed" and not include_failed):
                continue
            self.by_parent.setdefault(record["parent"]["hash"], []).append(record)
        for group in self.by_parent.values():
            group.sort(key=lambda r: r["status"] != "verified")  # stable: verified first, recorded order

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "path": self.path, "states": len(self.by_parent)}

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        proposals = []
        for rank, record in enumerate(self.by_parent.get(program_hash(program), [])):
            name = record["strategy"]
            try:
                step = apply_strategy(program, name, record["site"]["index"], record["params"])
            except (StrategyError, LeirError, KeyError, ValueError) as exc:
                proposals.append(Proposal(name, failure={"kind": "replay_mismatch", "reason": str(exc)},
                                          origin=self.name))
                continue
            child = record.get("child")
            if child is not None and program_hash(step.after) != child["hash"]:
                proposals.append(Proposal(name, failure={
                    "kind": "replay_mismatch",
                    "reason": f"the engine now gives {program_hash(step.after)[:12]}, recorded "
                              f"{child['hash'][:12]}"}, origin=self.name))
                continue
            proposals.append(Proposal(name, step, -float(rank), "recorded", origin=self.name))
        return proposals
