"""loop_parallelization (catalogue #15): a serial spatial loop becomes a parallel ``P`` loop."""

from __future__ import annotations

from leir.analysis import loop_race_reason
from leir.ast import Block, Loop, Program
from leir.gpu_limits import all_loops, is_block_axis
from leir.printer import loop_text
from leir.rewrite import block_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block
from strategies.loop.nest import (
    LOOP_SITE_REFUSALS,
    change_kind,
    check_loop,
    enclosing_vector_loop,
    find_loop,
    loop_sites,
    trip_count,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def runs_parallel(lp: Loop) -> bool:
    """Whether the CPU lowering runs the loop on several cores (``P``, or a blockIdx-bound ``B``)."""
    return lp.kind == "P" or (lp.kind == "B" and is_block_axis(lp.var))


@register
class LoopParallelization(Strategy):
    """Mark a serial spatial loop ``L`` as parallel ``P``: its iterations run on several CPU cores.

    From level1/cat_split_chunk:

    Before: ``B^{4}_{tx=0}L^{24}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a};];``
    After:  ``B^{4}_{tx=0}P^{24}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a};];``

    Precondition: the loop has at least 2 iterations, no statement under the loop carries a dependence along it (not a reduction,
    accumulation, recurrence or last-writer axis, and no tensor passes values between its
    iterations), no other loop of the top-level block already runs in parallel (the CPU lowering runs
    one parallel level per nest, so a second one would silently run serially) and no vectorised loop
    encloses it. Each iteration computes its own elements with the same arithmetic: exact (E).
    """

    number = 15
    name = "loop_parallelization"
    level = Level.LOOP
    exactness = Exactness.E
    refusals = {**LOOP_SITE_REFUSALS, "cannot-parallelize": "the loop is not a serial spatial loop of extent > 1 alone in running parallel in its nest, outside any vectorised loop"}

    def candidates(self, program: Program) -> list[Site]:
        return loop_sites(self, program)

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop]:
        return check_loop(self, program, site, "cannot-parallelize", self._problem)

    @staticmethod
    def _problem(program: Program, path: tuple[int, ...], lp: Loop) -> str | None:
        if lp.kind != "L":
            return f"the loop {loop_text(lp)} is {lp.kind}, not serial L"
        if lp.extent < 2:
            return f"the loop {loop_text(lp)} has a single iteration; there is nothing to share"
        reason = loop_race_reason(program, path, lp.var)
        if reason:
            return f"the loop {loop_text(lp)} {reason}; its iterations cannot run in parallel"
        nest = tuple(all_loops(program.body.blocks[path[0]]))
        busy = [o for o in nest if runs_parallel(o)]
        if busy:
            return f"the loop {loop_text(busy[0])} of the same nest already runs in parallel"
        vector = enclosing_vector_loop(program, path, block_at(program.body, path).loops.index(lp))
        if vector:
            return f"it lies inside the vectorised loop {loop_text(vector)}"
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        return change_kind(self, program, site, "P")

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        block, k, old = find_loop(self, before, site.path, site.get("loop"))
        new = block_at(after.body, site.path).loops[k]
        t = TraceBuilder()
        per_iter = trip_count(block.loops[k + 1:])
        return t.build(
            applicability=(f"In {describe_block(site.path)} the serial loop {t.before(loop_text(old))} is "
                           f"spatial: every statement under it writes elements indexed by {old.var} and "
                           "reads nothing another iteration writes, and no other loop of the nest runs in "
                           "parallel yet."),
            change=f"{t.before(loop_text(old))} becomes {t.after(loop_text(new))}; no parameters.",
            rationale=(f"The {old.extent} independent iterations, {per_iter} inner iteration(s) each, are "
                       f"shared among the CPU cores: with c cores each runs about {old.extent}/c of them "
                       "instead of one core running all, for one fork-join per entry of the loop."),
            exactness=("Exact (E): each iteration computes its own elements with the same arithmetic in the "
                       "same order, so the outputs are bitwise identical."),
        )
