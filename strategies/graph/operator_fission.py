"""operator_fission (catalogue #2): a block's items are separated into two blocks with the same header."""

from __future__ import annotations

from functools import partial

from leir.analysis import interleaving_hazards, iterations, program_info
from leir.ast import Block, Program
from leir.printer import canonical
from leir.rewrite import map_item_exprs, rename_tensor, replace_at, with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import header_text
from strategies.graph.blocks import tensors_of
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@register
class OperatorFission(Strategy):
    """Split a top-level block at a seam between its items: the two parts become consecutive blocks.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*0.5;C^{f32,g}_{tx,a}=max(D^{f32,g}_{tx,a},0);];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*0.5;];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=max(D^{f32,g}_{tx,a},0);];``

    Precondition: the block has at least two items and no dependence forbids running every iteration
    of the items before the seam ahead of those after it: each tensor both parts touch (one writing) is
    accessed at one identical subscript that names a distinct element per iteration. Repeated fission
    gives one block per item. On-chip (``l``/``s``) intermediates both parts use go back to global
    memory, since on-chip buffers do not outlive a block.
    Exact (E): every element is computed by the same operations from the same values.
    """

    number = 2
    name = "operator_fission"
    level = Level.GRAPH
    exactness = Exactness.E
    inverse_of = ("operator_fusion",)
    refusals = {"cannot-fission": "there is no such block or seam, or running the items before the seam "
                                  "for every iteration first changes what the items after it read"}

    def _problem(self, program: Program, index: int, seam: int) -> str | None:
        if not 0 <= index < len(program.body.blocks):
            return f"there is no block {index + 1}"
        block = program.body.blocks[index]
        if not 0 < seam < len(block.items):
            return f"block {index + 1} has {len(block.items)} item(s); there is no seam after item {seam}"
        hazards = interleaving_hazards(block.loops, block.items[:seam], block.items[seam:])
        return "; ".join(hazards) if hazards else None

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for index, block in enumerate(program.body.blocks):
            for seam in range(1, len(block.items)):
                if self.legal(program, Site((index,), (("seam", seam),))):
                    sites.append(Site((index,), (("seam", seam),),
                                      where=f"block {index + 1} between items {seam} and {seam + 1}"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[int, int]:
        """The block index and the seam to cut it at, or a refusal."""
        (index,) = site.path
        seam = int(site.get("seam"))
        problem = self._problem(program, index, seam)
        if problem:
            raise self.refuse("cannot-fission", problem, site)
        return index, seam

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        index, seam = self.check(program, site, params)
        block = program.body.blocks[index]
        head, tail = Block(block.loops, block.items[:seam]), Block(block.loops, block.items[seam:])
        info = program_info(program)
        for name in sorted(tensors_of(head) & tensors_of(tail)):
            tensor = info.tensors[name]
            if tensor.scope != "g":
                to_global = partial(rename_tensor, old=name, new=name, scope="g")
                head = map_item_exprs(head, to_global)
                tail = map_item_exprs(tail, to_global)
        return with_body(program, replace_at(program.body, (index,), (head, tail)))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        (index,) = site.path
        seam = int(site.get("seam"))
        block = before.body.blocks[index]
        head, tail = after.body.blocks[index], after.body.blocks[index + 1]
        shared = sorted(tensors_of(head) & tensors_of(tail))
        count = iterations(block.loops)
        info = program_info(before)
        moved = [n for n in shared if info.tensors[n].scope != "g"]
        t = TraceBuilder()
        link = (f"they share {', '.join(shared)}, each accessed at one subscript naming a distinct element "
                "per iteration" if shared else "they share no tensor")
        return t.build(
            applicability=(f"Block {index + 1} {t.before(canonical(block))} has {len(block.items)} items "
                           f"under {t.before(header_text(block.loops))}; its items 1–{seam} and "
                           f"{seam + 1}–{len(block.items)} can run as separate passes because {link}."),
            change=(f"It becomes {t.after(canonical(head))} followed by {t.after(canonical(tail))}"
                    + (f"; {', '.join(moved)} moves back to global memory" if moved else "")
                    + f"; parameter seam={seam}."),
            rationale=(f"Each part now runs its own pass of {count} iterations: smaller loop bodies with "
                       "fewer live values, and each part can be given its own loop order, tiling, "
                       "parallelisation or binding — an enabling step (the inverse of operator_fusion)."),
            exactness="Exact (E): each element is computed by the same operations from the same values.",
        )
