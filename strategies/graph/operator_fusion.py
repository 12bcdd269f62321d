"""operator_fusion (catalogue #1): two adjacent blocks with one header become one block."""

from __future__ import annotations

from functools import partial

from leir.analysis import (
    DepKind,
    dependences,
    has_reduction,
    interleaving_hazards,
    iterations,
    producers,
    readers_after,
    tensor_bytes,
    writes,
)
from leir.ast import Block, Program
from leir.printer import canonical
from leir.rewrite import map_item_exprs, rename_tensor, replace_at, with_body
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy
from strategies.common import describe_block, header_text
from strategies.graph.blocks import rename_to, same_header
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

SCOPES = ("g", "l", "s")


@register
class OperatorFusion(Strategy):
    """Fuse block *i+1* into block *i*: both statement lists run under the one shared header.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*0.5;];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=max(D^{f32,g}_{tx,a},0);];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*0.5;C^{f32,g}_{tx,a}=max(D^{f32,g}_{tx,a},0);];``

    Precondition: adjacent top-level blocks whose headers run the same iterations (same kinds and
    extents; the second's loop variables are renamed to the first's), neither containing a reduction,
    the second reading what the first writes, and every tensor both touch (one writing) accessed at
    one identical subscript that names a distinct element per iteration — so interleaving the two
    per iteration reads exactly the values the two passes read.
    Parameter ``scope``: intermediates the first block writes that only the fused block uses may move
    to local (``l``) or shared (``s``) memory (``g`` keeps them global).
    Exact (E): every element is computed by the same operations from the same values.
    """

    number = 1
    name = "operator_fusion"
    level = Level.GRAPH
    exactness = Exactness.E
    inverse_of = ("operator_fission",)
    refusals = {"cannot-fuse-blocks": "the block is the last, the two headers run different iterations, one "
                                      "contains a reduction, the second does not read the first, or "
                                      "interleaving them per iteration changes what is read"}

    def _problem(self, program: Program, index: int) -> str | None:
        blocks = program.body.blocks
        if index + 1 >= len(blocks):
            return f"block {index + 1} is the last block"
        first, second = blocks[index], blocks[index + 1]
        if not same_header(first, second):
            return (f"the headers {header_text(first.loops)} and {header_text(second.loops)} run different "
                    "iterations")
        for path in ((index,), (index + 1,)):
            if has_reduction(program, path):
                return f"{describe_block(path)} contains a reduction"
        second = rename_to(first, second)
        if not any(d.kind is DepKind.FLOW for d in dependences(first, second)):
            return f"block {index + 2} does not read what block {index + 1} writes"
        hazards = interleaving_hazards(first.loops, first.items, second.items)
        return "; ".join(hazards) if hazards else None

    def _private(self, program: Program, index: int) -> tuple[str, ...]:
        """Intermediates written in block ``index`` that no block but it and the next one touches."""
        known = set(program.signature.names)
        out = []
        for name in sorted(writes(program.body.blocks[index])):
            if name in known or readers_after(program.body, index + 1, name):
                continue
            if any(p[0] not in (index, index + 1) for p in producers(program.body, name)):
                continue
            out.append(name)
        return tuple(out)

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for index in range(len(program.body.blocks) - 1):
            if not self.legal(program, Site((index,))):
                continue
            private = self._private(program, index)
            params = (ParamSpec("scope", SCOPES, f"memory scope of {', '.join(private)}"),) if private else ()
            sites.append(Site((index,), (), params, where=f"blocks {index + 1} and {index + 2}"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> int:
        """The index of the first of the two blocks to fuse, or a refusal."""
        (index,) = site.path
        problem = self._problem(program, index)
        if problem:
            raise self.refuse("cannot-fuse-blocks", problem, site)
        return index

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        index = self.check(program, site, params)
        first = program.body.blocks[index]
        second = rename_to(first, program.body.blocks[index + 1])
        fused = Block(first.loops, first.items + second.items)
        scope = str(params.get("scope", "g"))
        if scope != "g":
            for name in self._private(program, index):
                fused = map_item_exprs(fused, partial(rename_tensor, old=name, new=name, scope=scope))
        body = replace_at(program.body, (index,), fused)
        return with_body(program, replace_at(body, (index + 1,), ()))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        (index,) = site.path
        first, second = before.body.blocks[index], before.body.blocks[index + 1]
        fused = after.body.blocks[index]
        deps = dependences(first, rename_to(first, second))
        flow = sorted(d.tensor for d in deps if d.kind is DepKind.FLOW)
        private = self._private(before, index)
        scope = str(params.get("scope", "g"))
        count = iterations(first.loops)
        t = TraceBuilder()
        moved = sum(tensor_bytes(before, name) for name in flow)
        scope_note = ""
        if private and scope != "g":
            where = "local" if scope == "l" else "shared"
            scope_note = (f" The intermediate(s) {', '.join(private)} are used by nothing else, so they move "
                          f"to {where} memory (scope {scope}).")
        elif private:
            scope_note = (f" {', '.join(private)} is used by nothing after the fused block; it stays global "
                          "(scope g).")
        return t.build(
            applicability=(f"Blocks {index + 1} and {index + 2} both run "
                           f"{t.before(header_text(first.loops))} ({count} iterations), neither is a "
                           f"reduction, and block {index + 2} reads "
                           f"{', '.join(flow)} at the subscript block {index + 1} writes it "
                           f"({t.before(canonical(first))} then {t.before(canonical(second))})."),
            change=(f"The two blocks become {t.after(canonical(fused))}.{scope_note}"
                    + (f" Parameter scope={scope}." if private else " No parameters.")),
            rationale=(f"One pass over the {count} iterations instead of two: {', '.join(flow)} "
                       f"({moved} bytes) is consumed in the iteration that produces it, while it is still in "
                       "registers or cache, instead of being written out and read back by a second loop nest "
                       "(one kernel launch fewer on a GPU)."),
            exactness="Exact (E): each element is computed by the same operations from the same values.",
        )
