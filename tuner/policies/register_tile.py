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

The last stage has a second form, the **panel order** (``_panel_order``): before the cache, the tile's leading
loop (a block of rows, which the weight operand does not index) swaps with the loop over the weight's
column panels, and that loop is bound to a block axis, so each parallel iteration streams one panel of
the weight (a few hundred KB, kept in L2) past every row block instead of streaming the whole weight
once per row block. The model sees the difference as the weight's L2 misses (``tuner.cost.reread_weight``)
and picks the cheaper form. Measured on level2/gemm_scale (96x1664x1600, AMD EPYC, 2 cores, A/B jobs):
panel-outer 1.76-1.88 ms in four readings, rows-outer 1.80-3.86 ms in eight — the rows-outer kernel
reads its 10.6 MB transposed weight eight times through the L3 the VM shares, the panel-outer one once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from leir.analysis import item_statements, stmt_reads
from leir.ast import Program
from leir.gpu_limits import is_block_axis
from strategies.base import AppliedStep, ParamValue, Site
from strategies.loop.loop_vectorization import MAX_VECTOR_EXTENT
from strategies.registry import get_strategy
from tuner.cost import program_cost, register_accumulator, reread_weight
from tuner.policies.base import strategy_steps
from verifier.targets import vector_unit

#: What identifies a step among one state's candidates (``step_key``).
StepKey = tuple[str, str, tuple[tuple[str, ParamValue], ...]]

RECIPE = ("loop_unrolling", "loop_split", "loop_vectorization", "loop_reorder", "cache_read_write")


@dataclass(frozen=True)
class Chain:
    """Steps that complete the recipe from a state, and the modelled cost of the state they reach."""

    steps: tuple[AppliedStep, ...]
    cost: float

    @property
    def first(self) -> AppliedStep:
        return self.steps[0]


def step_key(step: AppliedStep) -> StepKey:
    """What identifies a step among one state's candidates: strategy, site and parameters."""
    return step.strategy, step.site.key, tuple(sorted(step.params.items()))


def _params(name: str, site: Site) -> list[dict[str, ParamValue]]:
    """The one parameter choice each stage takes: the vector width for the split (its largest divisor
    up to ``MAX_VECTOR_EXTENT``, the widest ``V`` loop), a local buffer for the write cache, nothing
    for the rest."""
    if name == "loop_split":
        factors = [v for spec in site.params for v in spec.values if isinstance(v, int) and v >= 2]
        fitting = [f for f in factors if f <= MAX_VECTOR_EXTENT]
        return [{"factor": max(fitting)}] if fitting else []
    if name == "cache_read_write":
        return [{"scope": "l"}] if site.get("direction") == "write" else []
    if name == "loop_binding":
        axes = [v for spec in site.params for v in spec.values if isinstance(v, str) and is_block_axis(v)]
        return [{"axis": axes[0]}] if axes else []
    return [{}]


def _stage(program: Program, name: str, block: int,
           where: Callable[[Site], bool] | None = None) -> Iterator[AppliedStep]:
    """Every step of recipe stage ``name`` at top-level block ``block`` of ``program`` (at the sites
    ``where`` admits, when given)."""
    return strategy_steps(get_strategy(name), program, lambda site: _params(name, site),
                          keep=lambda site: site.path[0] == block and (where is None or where(site)))


def _rereads_past_l2(program: Program, block: int) -> bool:
    """Whether a statement of ``block`` reads an operand again for every iteration of an outer loop over
    more of it than L2 holds (what the panel order avoids)."""
    statements = item_statements(program.body.blocks[block])
    return any(reread_weight(ref, loops) > 1 for _path, stmt, loops in statements for ref in stmt_reads(stmt))


def _panel_order(program: Program, block: int, target: str) -> Chain | None:
    """The cheapest panel-order chain at ``block``: a reorder that moves the block's leading bound loop
    (the row blocks, bound as the frontend binds a batch or row axis) inward, a block-axis binding of the
    loop that took its place, and the write cache that makes the tile. Only from a bound leading loop: a
    serial one there is a reorder's doing, which the panel reorder would merely undo. Only where an
    operand is read again past L2 (``tuner.cost.reread_weight``): elsewhere the order changes nothing."""
    loops = program.body.blocks[block].loops
    if len(loops) < 2 or loops[0].kind != "B" or not _rereads_past_l2(program, block):
        return None
    best: Chain | None = None
    for reorder in _stage(program, "loop_reorder", block, lambda site: site.get("outer") == loops[0].var):
        lead = reorder.after.body.blocks[block].loops[0].var

        def leading(site: Site, lead: str = lead) -> bool:
            return bool(site.get("loop") == lead)  # ``Site.get`` answers Any

        for bind in _stage(reorder.after, "loop_binding", block, leading):
            for cache in _stage(bind.after, "cache_read_write", block):
                if not _holds_a_register_tile(cache.after, block, target):
                    continue
                found = Chain((reorder, bind, cache), program_cost(cache.after, target).total)
                if best is None or found.cost < best.cost:
                    best = found
    return best


def _holds_a_register_tile(program: Program, block: int, target: str) -> bool:
    """Whether a statement of ``block`` accumulates into ``target``'s registers for a whole loop
    (``tuner.cost.register_accumulator``): what the recipe is for."""
    unit = vector_unit(target)
    return any(register_accumulator(stmt.target, loops, unit)
               for _path, stmt, loops in item_statements(program.body.blocks[block]))


def _complete(program: Program, stage: int, block: int, target: str) -> Chain | None:
    """The cheapest chain of the recipe's stages ``stage…`` from ``program`` at ``block``."""
    last = stage + 1 == len(RECIPE)
    best = _panel_order(program, block, target) if last else None
    for step in _stage(program, RECIPE[stage], block):
        if last:
            if not _holds_a_register_tile(step.after, block, target):
                continue  # a staged row or column, not a tile: the generic lookahead's business
            found: Chain | None = Chain((step,), program_cost(step.after, target).total)
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
        if (panel := _panel_order(program, block, target)) is not None:
            found.append(panel)  # the last stage's panel form is three steps by itself
        if found:
            chains.append(min(found, key=lambda chain: (chain.cost, len(chain.steps))))
    return chains
