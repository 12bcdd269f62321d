"""``RulePolicy``: the engine's legal steps ranked by the modelled cost they save.

Each legal step is applied (pure Python, no build) and scored by ``cost(before) - cost(after)`` under
``tuner.cost`` — loop extents, bytes touched, the parallel and vector width a loop kind makes available.
When a measured-cost cache is given (state hash -> measured seconds, filled by the search from its
verifications) a step whose result was measured ranks by the measurement instead, ahead of modelled ones.
Ties break by a hash of the seed and the step, so the order is deterministic for a seed. The ranked list
is then *spread* (``spread``): the best step of each (strategy, block) first, runners-up after, so a
search's branch measures different kinds of steps rather than one step at each of its sites' variants.

One step of lookahead where a single step saves nothing by itself: a ``loop_split`` whose inner loop a
``V`` loop can then take (the policy adds, per split site, the factor that fits a vector register) is
scored by what that vectorisation saves, discounted by ``LOOKAHEAD_DISCOUNT``.

The cost model maps loop kinds as the lowering does for the target (``llvm`` by default: a ``B`` loop
over ``tx`` is serial on the CPU, so making a loop ``P`` is where the first large saving is).
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping

from leir.ast import Program
from leir.program import program_hash
from leir.strategies.base import AppliedStep
from leir.strategies.explore import PlannedStep, StepFailure, attempt
from leir.strategies.registry import get_strategy
from tuner.cost import program_cost
from tuner.policies.base import engine_steps
from tuner.proposals import Proposal, SearchContext

#: Widest vector loop ``loop_vectorization`` takes (its ``MAX_VECTOR_EXTENT``).
MAX_VECTOR_EXTENT = 16
#: A split is worth what the vector loop it enables saves, discounted for being two steps away.
LOOKAHEAD_DISCOUNT = 0.9


def _vector_blocks(program: Program) -> set[tuple[int, ...]]:
    """Block paths where a loop can be vectorised already (a split there enables nothing new)."""
    try:
        return {site.path for site in get_strategy("loop_vectorization").candidates(program)}
    except Exception:  # noqa: BLE001 - a strategy that fails proposes nothing
        return set()


def _family(proposal: Proposal) -> tuple[str, str]:
    """The strategy and the block a step works on (``0[loop=a]`` → block ``0``)."""
    step = proposal.step
    return proposal.strategy, step.site.key.split("[", 1)[0] if step is not None else ""


def spread(ranked: list[Proposal]) -> list[Proposal]:
    """``ranked`` reordered so the best step of each (strategy, block) comes first, in rank order, and
    only then the runners-up of each family, round by round.

    Steps of one strategy at one block are near-duplicates for a search — the same loop made parallel
    at each of its levels, a staging buffer in ``l`` or in ``s``, a GPU binding to ``ty`` or ``tz`` —
    and without this a branch of four would measure four of them and nothing else. Measured steps rank
    ahead of modelled ones as before, and the order stays a pure function of ``ranked``.
    """
    rounds: dict[tuple[str, str], int] = {}
    keyed = []
    for index, proposal in enumerate(ranked):
        family = _family(proposal)
        rank = rounds.get(family, 0)
        rounds[family] = rank + 1
        measured = 0 if proposal.rationale.startswith("measured") else 1
        keyed.append(((measured if rank == 0 else 2, rank, index), proposal))
    keyed.sort(key=lambda pair: pair[0])
    return [proposal for _key, proposal in keyed]


class RulePolicy:
    name = "rule"

    def __init__(self, *, seed: int = 0, params_per_site: int = 4, strategies: tuple[str, ...] | None = None,
                 measured: MutableMapping[str, float] | None = None, target: str = "llvm"):
        self.seed = seed
        #: The target the cost model maps loop kinds for (what the measurer builds for).
        self.target = target
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

    def _steps(self, program: Program, state_hash: str) -> list[AppliedStep]:
        """The engine's steps plus, per ``loop_split`` site, the split whose inner extent a vector loop
        can take (the largest divisor up to ``MAX_VECTOR_EXTENT``), which seeded sampling may miss."""
        steps = list(engine_steps(program, state_hash, seed=self.seed, params_per_site=self.params_per_site,
                                  strategies=self.strategies))
        if self.strategies is not None and "loop_split" not in self.strategies:
            return steps
        have = {(s.strategy, s.site.key, s.params.get("factor")) for s in steps}
        split = get_strategy("loop_split")
        try:
            sites = split.candidates(program)
        except Exception:  # noqa: BLE001 - a broken strategy proposes nothing, as in engine_steps
            return steps
        for index, site in enumerate(sites):
            factors = [v for spec in site.params if spec.name == "factor" for v in spec.values
                       if isinstance(v, int) and 2 <= v <= MAX_VECTOR_EXTENT]
            if not factors or ("loop_split", site.key, max(factors)) in have:
                continue
            outcome = attempt(program, PlannedStep(split, index, site, {"factor": max(factors)}))
            if not isinstance(outcome, StepFailure):
                steps.append(outcome)
        return steps

    def _lookahead(self, step: AppliedStep, vector_blocks: set[tuple[int, ...]]) -> Program | None:
        """For a split at a block with no vectorisable loop yet: the best vectorisation it enables there."""
        if step.strategy != "loop_split" or step.site.path in vector_blocks:
            return None
        vectorise = get_strategy("loop_vectorization")
        best, best_cost = None, None
        try:
            sites = vectorise.candidates(step.after)
        except Exception:  # noqa: BLE001
            return None
        for index, site in enumerate(sites):
            if site.path != step.site.path:
                continue
            outcome = attempt(step.after, PlannedStep(vectorise, index, site, {}))
            if isinstance(outcome, StepFailure):
                continue
            cost = program_cost(outcome.after, self.target).total
            if best_cost is None or cost < best_cost:
                best, best_cost = outcome.after, cost
        return best

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        state_hash = program_hash(program)
        before = program_cost(program, self.target)
        here = self.measured.get(state_hash) if self.measured is not None else None
        scored = []
        vector_blocks = _vector_blocks(program)
        for step in self._steps(program, state_hash):
            after = program_cost(step.after, self.target)
            gain = (before.total - after.total) / before.total if before.total else 0.0
            rationale = f"modelled cost {before.total:.4g} -> {after.total:.4g}"
            ahead = self._lookahead(step, vector_blocks)
            if ahead is not None and before.total:
                then = program_cost(ahead, self.target).total
                if (before.total - then) / before.total * LOOKAHEAD_DISCOUNT > gain:
                    gain = (before.total - then) / before.total * LOOKAHEAD_DISCOUNT
                    rationale += f"; with the vector loop it enables {then:.4g}"
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
        return spread([proposal for _key, proposal in scored])
