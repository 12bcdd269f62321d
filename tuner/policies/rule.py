"""``RulePolicy``: the engine's legal steps ranked by the modelled cost they save.

Each legal step is applied (pure Python, no build) and scored by ``cost(before) - cost(after)`` under
``tuner.cost`` — loop extents, bytes touched, the parallel and vector width a loop kind makes available.
When a measured-cost cache is given (state hash -> measured seconds, filled by the search from its
verifications) a step whose result was measured ranks by the measurement instead, ahead of modelled ones.
Ties break by a hash of the seed and the step, so the order is deterministic for a seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping

from leir.ast import Program
from leir.program import program_hash
from tuner.cost import program_cost
from tuner.policies.base import engine_steps
from tuner.proposals import Proposal, SearchContext


class RulePolicy:
    name = "rule"

    def __init__(self, *, seed: int = 0, params_per_site: int = 4, strategies: tuple[str, ...] | None = None,
                 measured: MutableMapping[str, float] | None = None):
        self.seed = seed
        self.params_per_site = params_per_site
        self.strategies = strategies
        #: Measured seconds per state hash (optional); the search adds what it measures.
        self.measured = measured

    def describe(self) -> dict:
        return {"name": self.name, "seed": self.seed, "params_per_site": self.params_per_site,
                "strategies": list(self.strategies) if self.strategies else None,
                "measured_cache": self.measured is not None}

    def _tie(self, key: str) -> str:
        return hashlib.sha256(f"{self.seed}|{key}".encode()).hexdigest()

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        state_hash = program_hash(program)
        before = program_cost(program)
        here = self.measured.get(state_hash) if self.measured is not None else None
        scored = []
        for step in engine_steps(program, state_hash, seed=self.seed, params_per_site=self.params_per_site,
                                 strategies=self.strategies):
            after = program_cost(step.after)
            gain = (before.total - after.total) / before.total if before.total else 0.0
            rationale = f"modelled cost {before.total:.4g} -> {after.total:.4g}"
            measured_rank = 1
            child = self.measured.get(program_hash(step.after)) if self.measured is not None else None
            if child is not None and here:
                gain = (here - child) / here
                measured_rank = 0
                rationale = f"measured {here * 1e6:.4g} us -> {child * 1e6:.4g} us"
            key = f"{step.strategy}|{step.site.key}|{sorted(step.params.items())}"
            scored.append(((measured_rank, -gain, self._tie(key)),
                           Proposal(step.strategy, step, gain, rationale, origin=self.name)))
        scored.sort(key=lambda pair: pair[0])
        return [proposal for _key, proposal in scored]
