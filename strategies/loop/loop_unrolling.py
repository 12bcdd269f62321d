"""loop_unrolling (catalogue #14): a serial loop of small extent becomes an unrolled one."""

from __future__ import annotations

from leir.ast import Block, Loop, Program
from leir.printer import loop_text
from leir.rewrite import block_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block, loop_index
from strategies.loop.nest import LOOP_SITE_REFUSALS, change_kind, find_loop, loop_sites
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Longest loop worth unrolling: beyond it code size grows faster than the loop overhead saved.
MAX_UNROLL_EXTENT = 16


@register
class LoopUnrolling(Strategy):
    """Mark a short serial loop ``L`` as unrolled ``U``, so the compiler replicates its body.

    Before: ``B^{16}_{tx=0}L^{4}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];``
    After:  ``B^{16}_{tx=0}U^{4}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];``

    Precondition: the loop is serial (``L``) and its extent is between 2 and ``MAX_UNROLL_EXTENT``.
    The iterations still run in header order, so every output element gets the same arithmetic: exact.
    """

    number = 14
    name = "loop_unrolling"
    level = Level.LOOP
    exactness = Exactness.E

    refusals = {
        **LOOP_SITE_REFUSALS,
        "not-serial": "the loop is not serial L",
        "extent-out-of-range": "the loop's extent is outside 2..MAX_UNROLL_EXTENT",
    }

    def candidates(self, program: Program) -> list[Site]:
        return loop_sites(self, program)

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop]:
        """The block, position and loop to unroll, or a refusal."""
        block, k, lp = find_loop(self, program, site.path, site.get("loop"))
        if lp.kind != "L":
            raise self.refuse("not-serial", f"the loop over {lp.var} is {lp.kind}, not serial L", site)
        if not 2 <= lp.extent <= MAX_UNROLL_EXTENT:
            raise self.refuse("extent-out-of-range", f"extent {lp.extent} is outside 2..{MAX_UNROLL_EXTENT}", site)
        return block, k, lp

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        return change_kind(self, program, site, "U")

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        var = site.get("loop")
        old = block_at(before.body, site.path).loops[loop_index(block_at(before.body, site.path), var)]
        new = block_at(after.body, site.path).loops[loop_index(block_at(after.body, site.path), var)]
        statements = sum(1 for item in block_at(before.body, site.path).items)
        t = TraceBuilder()
        return t.build(
            applicability=(f"In {describe_block(site.path)} the loop {t.before(loop_text(old))} is serial "
                           f"with a small constant extent of {old.extent} (at most {MAX_UNROLL_EXTENT}), "
                           "so it can be unrolled."),
            change=f"{t.before(loop_text(old))} becomes {t.after(loop_text(new))}; no parameters.",
            rationale=(f"Unrolling replicates the {statements} item(s) of its body {old.extent} times: the "
                       f"loop counter, its {old.extent} compare-and-branch steps and the index arithmetic on "
                       f"{var} disappear, and the copies expose independent work to instruction scheduling."),
            exactness=("Exact (E): the iterations run in the same order with the same arithmetic, so the "
                       "outputs are bitwise identical."),
        )
