"""loop_unrolling (catalogue #14): a serial loop of small extent becomes an unrolled one."""

from __future__ import annotations

from leir.ast import Block, Loop, Program
from leir.printer import loop_text
from leir.rewrite import block_at, replace_at, with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import blocks, describe_block, loop_index
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

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path, block in blocks(program):
            for lp in block.loops:
                if lp.kind == "L" and 2 <= lp.extent <= MAX_UNROLL_EXTENT:
                    sites.append(Site(path, (("loop", lp.var),),
                                      where=f"the loop over {lp.var} in {describe_block(path)}"))
        return sites

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block = block_at(program.body, site.path)
        var = site.get("loop")
        try:
            index = loop_index(block, var)
        except KeyError:
            raise self.refuse(f"{describe_block(site.path)} has no loop over {var}") from None
        lp = block.loops[index]
        if lp.kind != "L":
            raise self.refuse(f"the loop over {var} is {lp.kind}, not serial L")
        if not 2 <= lp.extent <= MAX_UNROLL_EXTENT:
            raise self.refuse(f"extent {lp.extent} is outside 2..{MAX_UNROLL_EXTENT}")
        loops = block.loops[:index] + (Loop("U", lp.extent, lp.var),) + block.loops[index + 1:]
        return with_body(program, replace_at(program.body, site.path, Block(loops, block.items)))

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
