"""``RulePolicy``: the engine's legal steps ranked by the modelled cost they save.

Each legal step is applied (pure Python, no build) and scored by ``cost(before) - cost(after)`` under
``tuner.cost`` — loop extents, bytes touched, the parallel and vector width a loop kind makes available.
When a measured-cost cache is given (state hash -> measured seconds, filled by the search from its
verifications) a step whose result was measured ranks by the measurement instead, ahead of modelled ones.
Ties break by a hash of the seed and the step, so the order is deterministic for a seed. The ranked list
is then *spread* (``spread``): the best step of each (strategy, block) first, runners-up after, so a
search's branch measures different kinds of steps rather than one step at each of its sites' variants.

One step of lookahead where a single step saves nothing by itself (``FOLLOW_UPS``): a
``layout_transformation`` that lets a ``loop_reorder`` put a contiguous loop innermost, a ``loop_split``
whose inner loop a ``V`` loop can take (the policy adds, per split site, the factor that fits a vector
register) or that a reorder can move, a reorder that brings a parallelisable loop outward or gives a
block its producer's header so that ``compute_inline`` can remove a large intermediate. Such a step is
scored by the best two-step result, discounted by ``LOOKAHEAD_DISCOUNT`` — but only when it *enables*
that result: the two steps together must save more than the step alone plus the best the follow-up
strategies save at the follow-up's blocks from the current state already, or every step would inherit
the gain of an independent parallelisation. Lookahead is spent only where a follow-up works on a block
holding at least ``HOT_SHARE`` of what it can change (``_hot``), which keeps a policy call on a
many-block state cheap.

The cost model maps loop kinds as the lowering does for the target (``llvm`` by default: a ``B`` loop
over ``tx`` is serial on the CPU, so making a loop ``P`` is where the first large saving is).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import MutableMapping

from dataset.planning import PlannedStep, StepFailure, attempt
from leir.analysis import loop_vars_in
from leir.ast import Program
from leir.program import program_hash
from strategies.base import AppliedStep, ParamValue, Site
from strategies.engine import strategy_sites
from strategies.registry import get_strategy
from tuner.cost import CostBreakdown, max_sharing_copies, program_cost
from tuner.policies.base import engine_steps, strategy_steps
from tuner.policies.register_tile import RECIPE, Chain, StepKey, register_tile_chains, step_key
from tuner.proposals import Proposal, SearchContext
from verifier.targets import vector_unit

#: Widest vector loop ``loop_vectorization`` takes (its ``MAX_VECTOR_EXTENT``).
MAX_VECTOR_EXTENT = 16
#: The follow-ups a chain still tries after a first follow-up that saves by itself (``_best_follow_up``).
REGISTER_TILE_FOLLOW_UPS = frozenset({"loop_unrolling"})
#: A step is worth the state its follow-ups reach, counted 1/LOOKAHEAD_DISCOUNT dearer per step away.
LOOKAHEAD_DISCOUNT = 0.9
#: Follow-up strategies a step of each strategy can enable (what the lookahead tries after it).
FOLLOW_UPS: dict[str, tuple[str, ...]] = {
    "layout_transformation": ("loop_reorder",),
    "loop_split": ("loop_vectorization", "loop_reorder", "loop_parallelization"),
    "loop_tiling": ("loop_vectorization", "loop_parallelization"),
    "loop_reorder": ("loop_reorder", "loop_parallelization", "loop_vectorization", "compute_inline",
                     "loop_unrolling"),
    # a fusion saves a pass through memory and leaves one parallel loop to take where there were two:
    # binding each block first (the larger single step) puts the fusion last, where a budget may not reach
    "operator_fusion": ("loop_binding", "loop_parallelization"),
}
#: Strategies whose steps look two follow-ups ahead: a split is typically two steps from its payoff
#: (split, move the outer loop out, make it parallel); the rest look one ahead.
LOOKAHEAD_DEPTH = {"loop_split": 2}
#: How much more (as a share of the state's modelled cost) two steps must save than the step alone plus
#: the follow-up's strategy alone before the first step counts as enabling the second.
ENABLE_MARGIN = 0.05
#: Lookahead only for steps at blocks holding at least this share of the modelled cost that loop steps
#: can change (``CostBreakdown.loop_share``: streaming a large tensor is the same in every loop order).
HOT_SHARE = 0.1


#: Follow-ups that change what a block streams through memory, not only how its loops run.
STREAMING_FOLLOW_UPS = frozenset({"compute_inline"})


#: Strategies with parameter values the policy always tries (``_always_tried``).
ALWAYS_TRIED = ("loop_split", "layout_transformation", "set_storage_layout")


def _always_tried(strategy: str, site: Site, tile_rows: int) -> list[dict[str, ParamValue]]:
    """Parameters worth trying at every site whatever the seeded sample drew: for ``loop_split`` the
    inner extent that fills a vector register (the largest divisor up to ``MAX_VECTOR_EXTENT``) and the
    one whose unrolled copies fit the registers (the largest up to ``tile_rows``, the target's
    ``tuner.cost.max_sharing_copies``: the rows of a register tile); for the two layout strategies every
    transpose (what lets a reorder make a strided operand contiguous) and every pack into panels of a
    vector register's width (``pack:i:16``: what makes a register tile's operand one stream)."""
    values = [v for spec in site.params for v in spec.values]
    if strategy == "loop_split":
        factors = [v for v in values if isinstance(v, int) and v >= 2]
        wanted = {max((f for f in factors if f <= limit), default=None)
                  for limit in (MAX_VECTOR_EXTENT, tile_rows)}
        return [{"factor": f} for f in sorted(f for f in wanted if f is not None)]
    if strategy in ("layout_transformation", "set_storage_layout"):
        panels = f":{MAX_VECTOR_EXTENT}"
        return [{"layout": v} for v in values if isinstance(v, str)
                and (v.startswith("transpose:") or (v.startswith("pack:") and v.endswith(panels)))]
    return []


def _follow_up_names(strategy: str, steps: int) -> set[str]:
    """The strategies a chain of ``steps`` follow-ups after a ``strategy`` step may use: a step enables
    only what none of them reaches alone (a split is no enabler of an unroll the state already allows)."""
    names = set(FOLLOW_UPS.get(strategy, ()))
    for _ in range(steps - 1):
        names |= {later for name in names for later in FOLLOW_UPS.get(name, ())}
    return names


def _own_block(step: AppliedStep) -> int | None:
    """The top-level block a step's follow-ups work at: its own, or ``None`` (any) when the step added
    blocks and so shifted the indices (a layout copy)."""
    return step.site.path[0] if len(step.after.body.blocks) == len(step.before.body.blocks) else None


def _blocks_of(strategy: str, site: Site) -> tuple[int, ...]:
    """The top-level blocks a step at ``site`` changes: ``compute_inline`` at block *i* removes it and
    rewrites block *i+1*; every other strategy works on the block its site names."""
    first = site.path[0]
    return (first, first + 1) if strategy == "compute_inline" else (first,)


def _site_loops(site: Site) -> frozenset[str]:
    """The loop variables a loop step's site names (``loop``, or ``inner`` and ``outer``)."""
    return frozenset(var for key in ("loop", "inner", "outer") if (var := site.get(key)))


def _split_loops(step: AppliedStep) -> frozenset[str]:
    """The loops a ``loop_split`` made: the split loop and the fresh loop it added."""
    return _site_loops(step.site) | (loop_vars_in(step.after) - loop_vars_in(step.before))


def _hot(cost: CostBreakdown, follow_up: str, blocks: tuple[int, ...]) -> bool:
    """Whether a ``follow_up`` step at ``blocks`` is worth looking ahead to: one of them holds
    ``HOT_SHARE`` of what that strategy can change — the whole cost for an inline (it removes a large
    intermediate's streaming), the loop-dependent part (``loop_share``) for loop steps."""
    share = cost.share if follow_up in STREAMING_FOLLOW_UPS else cost.loop_share
    return max(share(block) for block in blocks) >= HOT_SHARE


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
                 measured: MutableMapping[str, float] | None = None, target: str = "llvm",
                 lookahead_seconds: float | None = None):
        self.seed = seed
        #: Per call, the wall seconds after which no more steps get lookahead (``None``: no bound). The
        #: lookahead is most of a call's cost (35 s on conv3d before it was focused); past the bound the
        #: remaining steps rank by what they save alone — the call is bounded, but its ranking then
        #: depends on the machine's speed, so the bound is off unless asked for.
        self.lookahead_seconds = lookahead_seconds
        #: The target the cost model maps loop kinds for (what the measurer builds for).
        self.target = target
        self.params_per_site = params_per_site
        self.strategies = strategies
        #: Measured seconds per state hash (optional); the search adds what it measures.
        self.measured = measured

    def describe(self) -> dict[str, object]:
        bound = {} if self.lookahead_seconds is None else {"lookahead_seconds": self.lookahead_seconds}
        return {"name": self.name, "seed": self.seed, "params_per_site": self.params_per_site,
                "strategies": list(self.strategies) if self.strategies else None,
                "measured_cache": self.measured is not None,
                **bound}

    def _tie(self, key: str) -> str:
        return hashlib.sha256(f"{self.seed}|{key}".encode()).hexdigest()

    def _steps(self, program: Program, state_hash: str) -> list[AppliedStep]:
        """The engine's steps plus the parameters ``_always_tried`` names for each site, which seeded
        sampling of ``params_per_site`` values may miss."""
        steps = list(engine_steps(program, state_hash, seed=self.seed, params_per_site=self.params_per_site,
                                  strategies=self.strategies))
        have = {(s.strategy, s.site.key, tuple(sorted(s.params.items()))) for s in steps}
        tile_rows = max_sharing_copies(vector_unit(self.target))
        for name in ALWAYS_TRIED:
            if self.strategies is not None and name not in self.strategies:
                continue
            def untried(site: Site, name: str = name) -> list[dict[str, ParamValue]]:
                return [params for params in _always_tried(name, site, tile_rows)
                        if (name, site.key, tuple(sorted(params.items()))) not in have]

            steps.extend(strategy_steps(get_strategy(name), program, untried))
        return steps

    def _best_follow_up(self, step: AppliedStep, depth: int = 1, only: frozenset[str] | None = None,
                        focus: frozenset[str] | None = None) -> tuple[float, int, tuple[int, ...]] | None:
        """``_reach`` after ``step``: at the step's own block, or at any hot block when it added blocks.
        After a ``loop_split`` the chain works at the loops the split made (``_split_loops``)."""
        if focus is None and step.strategy == "loop_split":
            focus = _split_loops(step)
        return self._reach(step.after, step.strategy, _own_block(step), depth, only, focus)

    def _reach(self, program: Program, strategy: str, block: int | None, depth: int = 1,
               only: frozenset[str] | None = None, focus: frozenset[str] | None = None,
               ) -> tuple[float, int, tuple[int, ...]] | None:
        """(lowest modelled cost, follow-ups taken, the blocks the first follow-up changes) that the
        ``FOLLOW_UPS`` of a ``strategy`` step reach from ``program``: one step, or with ``depth`` 2 also
        a second after a first that saves nothing alone (a split, then the reorder that moves its outer
        loop out, then the parallel loop that needed both).

        Follow-ups are looked for at ``block`` (at any hot block when it is ``None``, after a step
        that added blocks, as a layout change does), so a step never inherits what another block's
        steps would save; a
        ``compute_inline`` spans its producer and the next block, so it follows a step at either (a
        reorder that gives a consumer its producer's header).

        A first follow-up that saves by itself is followed further only by ``REGISTER_TILE_FOLLOW_UPS``
        (``only``): a split whose inner loop a reorder moves innermost pays through the unroll that
        shares loads between its copies, while a reorder or a parallel loop the state allows anyway must
        not make the split look enabling.

        With ``focus`` (the loops a split made, and those each follow-up of the chain moved) only
        follow-ups at one of those loops are tried: one elsewhere is open without the step, so it is
        what the step enables only through a loop the chain touched. On a nine-deep nest (conv3d) that
        is what keeps a policy call from trying every pair of loops twice over.
        """
        after_cost = program_cost(program, self.target)
        best: tuple[float, int, tuple[int, ...]] | None = None
        for name in FOLLOW_UPS.get(strategy, ()):
            if (self.strategies is not None and name not in self.strategies) \
                    or (only is not None and name not in only):
                continue
            follow_up = get_strategy(name)
            try:
                sites = strategy_sites(follow_up, program)
            except Exception:
                continue
            for index, site in enumerate(sites):
                blocks = _blocks_of(name, site)
                if block is not None and block not in blocks:
                    continue
                if not _hot(after_cost, name, blocks):
                    continue
                loops = _site_loops(site)
                if focus is not None and loops and not loops & focus:
                    continue
                # the widest split, vector or unroll; a named choice the engine fills with its first value
                # (a binding's axis: on the CPU every block axis runs the same)
                params: dict[str, ParamValue] = {
                    spec.name: max(v for v in spec.values if isinstance(v, int))
                    for spec in site.params if any(isinstance(v, int) for v in spec.values)}
                outcome = attempt(program, PlannedStep(follow_up, index, site, params))
                if isinstance(outcome, StepFailure):
                    continue
                found = (program_cost(outcome.after, self.target).total, 1, blocks)
                if depth > 1 and name in FOLLOW_UPS:
                    saves = found[0] < after_cost.total * (1 - ENABLE_MARGIN)
                    deeper = self._best_follow_up(outcome, depth - 1,
                                                  REGISTER_TILE_FOLLOW_UPS if saves else None,
                                                  None if focus is None else focus | loops)
                    if deeper is not None and deeper[0] < found[0]:
                        found = (deeper[0], deeper[1] + 1, blocks)
                if best is None or found < best:
                    best = found
        return best

    def _register_tiles(self, program: Program, before: CostBreakdown) -> dict[StepKey, Chain]:
        """The register-tile chains (``tuner.policies.register_tile``) from ``program`` at its hot
        blocks that save more than ``ENABLE_MARGIN`` in the end, by the key of their first step."""
        if not before.total or (self.strategies is not None and not set(RECIPE) <= set(self.strategies)):
            return {}
        hot = tuple(b for b in range(len(before.blocks)) if before.loop_share(b) >= HOT_SHARE)
        found: dict[StepKey, Chain] = {}
        for chain in register_tile_chains(program, hot, self.target):
            key = step_key(chain.first)
            if chain.cost < before.total * (1 - ENABLE_MARGIN) and (key not in found
                                                                   or chain.cost < found[key].cost):
                found[key] = chain
        return found

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        state_hash = program_hash(program)
        deadline = (time.monotonic() + self.lookahead_seconds if self.lookahead_seconds is not None
                    else float("inf"))
        before = program_cost(program, self.target)
        here = self.measured.get(state_hash) if self.measured is not None else None
        steps = self._steps(program, state_hash)
        gains = []
        best_now: dict[str, float] = {}
        best_at: dict[tuple[str, int], float] = {}  # (strategy, top-level block) -> best gain there
        for step in steps:
            after = program_cost(step.after, self.target)
            gain = (before.total - after.total) / before.total if before.total else 0.0
            gains.append((gain, after.total))
            best_now[step.strategy] = max(best_now.get(step.strategy, 0.0), gain)
            where = (step.strategy, step.site.path[0])
            best_at[where] = max(best_at.get(where, 0.0), gain)
        tiles = self._register_tiles(program, before)
        scored = []
        reached: dict[tuple[str, int | None, int], float] = {}  # what the follow-ups reach without a step
        for step, (gain, after_total) in zip(steps, gains, strict=True):
            rationale = f"modelled cost {before.total:.4g} -> {after_total:.4g}"
            enables = False
            if before.total and time.monotonic() < deadline and any(_hot(before, name, (step.site.path[0],))
                                    for name in FOLLOW_UPS.get(step.strategy, ())):
                ahead = self._best_follow_up(step, LOOKAHEAD_DEPTH.get(step.strategy, 1))
                if ahead is not None:
                    ahead_cost, taken, blocks = ahead
                    # What the follow-up strategies already save where the follow-up works, before this
                    # step (a step that added blocks shifted the indices: there, their best anywhere).
                    names = _follow_up_names(step.strategy, taken)
                    own_block = _own_block(step)
                    if own_block is not None:
                        already = max(best_at.get((name, block), 0.0) for name in names for block in blocks)
                    else:
                        already = max(best_now.get(name, 0.0) for name in names)
                    # What the follow-ups reach alone, from here, in one step or in as many as the chain
                    # took (a split is no enabler of a reorder and an unroll the state allows already),
                    # and what that and the step would reach were their savings independent (each
                    # scaling the cost by its own ratio): the chain must beat it by ENABLE_MARGIN.
                    alone = before.total * (1 - already)
                    if taken > 1:
                        chain_at = (step.strategy, own_block, taken)
                        if chain_at not in reached:
                            found = self._reach(program, *chain_at)
                            reached[chain_at] = found[0] if found is not None else before.total
                        alone = min(alone, reached[chain_at])
                    # Each step away makes the state reached count as LOOKAHEAD_DISCOUNT dearer.
                    discounted = (before.total - ahead_cost / LOOKAHEAD_DISCOUNT ** taken) / before.total
                    independent = alone * min(1.0, after_total / before.total)
                    if ahead_cost < independent * (1 - ENABLE_MARGIN) and discounted > gain:
                        gain, enables = discounted, True
                        steps_text = "the step" if taken == 1 else f"the {taken} steps"
                        rationale += f"; with {steps_text} it enables {ahead_cost:.4g}"
            then: tuple[AppliedStep, ...] = ()
            tile = tiles.get(step_key(step))
            if tile is not None:
                # one discount, not one per step: the search measures the whole recipe at once
                # (``Proposal.then``), so no beam can drop it part-way
                discounted = (before.total - tile.cost / LOOKAHEAD_DISCOUNT) / before.total
                if discounted > gain:
                    gain, enables, then = discounted, True, tile.steps[1:]
                    rationale += (f"; the first of the register tile's {len(tile.steps)} steps, "
                                  f"which reach {tile.cost:.4g}")
            measured_rank = 1
            child = self.measured.get(program_hash(step.after)) if self.measured is not None else None
            if child is not None and here:
                gain = (here - child) / here
                measured_rank = 0
                rationale = f"measured {here * 1e6:.4g} us -> {child * 1e6:.4g} us"
            key = f"{step.strategy}|{step.site.key}|{sorted(step.params.items())}"
            scored.append(((measured_rank, -gain, self._tie(key)),
                           Proposal(step.strategy, step, gain, rationale, origin=self.name,
                                    enables=enables, then=then)))
        scored.sort(key=lambda pair: pair[0])
        return spread([proposal for _key, proposal in scored])
