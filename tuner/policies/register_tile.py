"""The register-tile recipe: a chain of steps ``RulePolicy`` looks further along than its two-step lookahead.

A matrix product whose rows are unrolled innermost (``…L_c L_a U_d``: the weight vector is loaded once for
all the rows) still loads and stores its accumulator row on every step of the reduction. The tile that
keeps the accumulator in registers for the whole reduction is four steps further, and none of them pays
before the last (docs/tuning.md, register tiles):

0. ``loop_unrolling`` of the row loop, where it is not unrolled yet (``L_d`` → ``U_d``);
1. ``loop_split`` the output's contiguous loop by the vector width (``L_a`` → ``L_e L_f``);
2. ``loop_vectorization`` of its inner part, over the unrolled rows (``V_f U_d``);
3. ``loop_reorder`` the reduction inside the outer part (``L_e L_c``);
4. ``cache_read_write`` of the accumulator into a local buffer, which the lowering allocates per
   iteration of the block's leading loops and LLVM keeps in registers (docs/leir.md, private copies).

Measured on level2/gemm_scale (96x1664x1600, AMD EPYC, 2 cores): 10.7 ms with the rows unrolled, 5.2 ms
with the tile. The generic lookahead would have to search every reorder and cache of every state three
steps deep to see it; the recipe tries only its own stages, at one block, which keeps a policy call cheap.
A state part-way along the recipe continues it from the stage it has reached.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from leir.analysis import item_statements
from leir.ast import Program
from leir.strategies.base import AppliedStep, Site
from leir.strategies.loop.loop_vectorization import MAX_VECTOR_EXTENT
from leir.strategies.registry import get_strategy
from tuner.cost import program_cost, register_accumulator
from tuner.policies.base import strategy_steps
from verifier.targets import vector_unit

RECIPE = ("loop_unrolling", "loop_split", "loop_vectorization", "loop_reorder", "cache_read_write")


@dataclass(frozen=True)
class Chain:
    """Steps that complete the recipe from a state, and the modelled cost of the state they reach."""

    steps: tuple[AppliedStep, ...]
    cost: float

    @property
    def first(self) -> AppliedStep:
        return self.steps[0]


def step_key(step: AppliedStep) -> tuple:
    """What identifies a step among one state's candidates: strategy, site and parameters."""
    return step.strategy, step.site.key, tuple(sorted(step.params.items()))


def _params(name: str, site: Site) -> list[dict]:
    """The one parameter choice each stage takes: the vector width for the split (its largest divisor
    up to ``MAX_VECTOR_EXTENT``, the widest ``V`` loop), a local buffer for the write cache, nothing
    for the rest."""
    if name == "loop_split":
        factors = [v for spec in site.params for v in spec.values if isinstance(v, int) and v >= 2]
        fitting = [f for f in factors if f <= MAX_VECTOR_EXTENT]
        return [{"factor": max(fitting)}] if fitting else []
    if name == "cache_read_write":
        return [{"scope": "l"}] if site.get("direction") == "write" else []
    return [{}]


def _stage(program: Program, name: str, block: int) -> Iterator[AppliedStep]:
    """Every step of recipe stage ``name`` at top-level block ``block`` of ``program``."""
    return strategy_steps(get_strategy(name), program, lambda site: _params(name, site),
                          keep=lambda site: site.path[0] == block)


def _holds_a_register_tile(program: Program, block: int, target: str) -> bool:
    """Whether a statement of ``block`` accumulates into ``target``'s registers for a whole loop
    (``tuner.cost.register_accumulator``): what the recipe is for."""
    unit = vector_unit(target)
    return any(register_accumulator(stmt.target, loops, unit)
               for _path, stmt, loops in item_statements(program.body.blocks[block]))


def _complete(program: Program, stage: int, block: int, target: str) -> Chain | None:
    """The cheapest chain of the recipe's stages ``stage…`` from ``program`` at ``block``."""
    best: Chain | None = None
    for step in _stage(program, RECIPE[stage], block):
        if stage + 1 == len(RECIPE):
            if not _holds_a_register_tile(step.after, block, target):
                continue  # a staged row or column, not a tile: the generic lookahead's business
            found = Chain((step,), program_cost(step.after, target).total)
        else:
            rest = _complete(step.after, stage + 1, block, target)
            found = Chain((step, *rest.steps), rest.cost) if rest is not None else None
        if found is not None and (best is None or found.cost < best.cost):
            best = found
    return best


def register_tile_chains(program: Program, blocks: tuple[int, ...], target: str) -> list[Chain]:
    """For each of ``blocks``, the cheapest chain of two or more steps that completes the recipe from
    ``program`` from any stage (a state part-way along it continues it): the last stage alone is a
    step whose saving the policy sees by itself."""
    chains = []
    for block in blocks:
        found = [chain for stage in range(len(RECIPE) - 1)
                 if (chain := _complete(program, stage, block, target)) is not None]
        if found:
            chains.append(min(found, key=lambda chain: (chain.cost, len(chain.steps))))
    return chains
