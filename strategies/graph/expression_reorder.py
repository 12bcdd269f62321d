"""expression_reorder (catalogue #9): two adjacent independent blocks (or statements) swap places."""

from __future__ import annotations

from collections.abc import Iterator

from leir.analysis import dependences, reads, tensor_bytes, writes
from leir.ast import Block, Item, Program
from leir.printer import canonical
from leir.rewrite import item_at, replace_at, with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import Path, blocks, describe_block
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def _describe(path: tuple[int, ...]) -> str:
    return describe_block(path) if len(path) == 1 else f"item {path[-1] + 1} of {describe_block(path[:-1])}"


@register
class ExpressionReorder(Strategy):
    """Swap an item with the next one when no read/write dependence links them.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*2;];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*2;];B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];``

    Precondition: two adjacent top-level blocks, or two adjacent items of one block, with no flow,
    anti (write-after-read) or output dependence between them: neither writes a tensor the other reads
    or writes. Reads of a common input are allowed.
    Exact (E): each block computes the same values from the same inputs in either order.
    """

    number = 9
    name = "expression_reorder"
    level = Level.GRAPH
    exactness = Exactness.E
    refusals = {"no-next-item": "the item at the site is the last of its list",
                "cannot-reorder-items": "the two items depend on each other, or are identical"}

    def _pairs(self, program: Program) -> Iterator[tuple[Path, Item, Item]]:
        """``(path of the first, first, second)`` for every adjacent pair, blocks then items in order."""
        top = program.body.blocks
        for index in range(len(top) - 1):
            yield (index,), top[index], top[index + 1]
        for path, block in blocks(program):
            for i in range(len(block.items) - 1):
                yield path + (i,), block.items[i], block.items[i + 1]

    def _problem(self, first: Item, second: Item) -> str | None:
        deps = dependences(first, second)
        if deps:
            return "; ".join(f"{d.kind.value} dependence on {d.tensor}" for d in deps)
        if canonical(first) == canonical(second):
            return "the two items are identical"
        return None

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path, first, second in self._pairs(program):
            if self._problem(first, second) is None:  # ``check``'s rule, on the pair already in hand
                sites.append(Site(path, (), where=f"{_describe(path)} and the one after it"))
        return sites

    def _pair(self, program: Program, path: tuple[int, ...]) -> tuple[Item, Item]:
        nxt = path[:-1] + (path[-1] + 1,)
        try:
            return item_at(program.body, path), item_at(program.body, nxt)
        except LookupError:
            raise self.refuse("no-next-item", f"{_describe(path)} has no next item") from None

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Item, Item]:
        """The item at the site and the one after it, to swap, or a refusal."""
        first, second = self._pair(program, site.path)
        problem = self._problem(first, second)
        if problem:
            raise self.refuse("cannot-reorder-items", problem, site)
        return first, second

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        first, second = self.check(program, site, params)
        body = replace_at(program.body, site.path, (second, first))
        stale = site.path[:-1] + (site.path[-1] + 2,)  # the old second item, after the spliced pair
        return with_body(program, replace_at(body, stale, ()))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        first, second = self._pair(before, site.path)
        t = TraceBuilder()
        common = sorted(reads(first) & reads(second))
        shared = (f"they only share the input(s) {', '.join(common)}, which neither writes"
                  if common else "they touch no common tensor")
        written = sorted(writes(second))
        size = sum(tensor_bytes(before, n) for n in written)
        level = "blocks" if len(site.path) == 1 else "statements"
        kind = "loop nest" if isinstance(second, Block) else "statement"
        return t.build(
            applicability=(f"{_describe(site.path).capitalize()} {t.before(canonical(first))} and the next "
                           f"{kind} {t.before(canonical(second))} have no flow, anti or output dependence: "
                           f"{shared}."),
            change=(f"The two {level} swap: {t.after(canonical(second) + canonical(first))}; no parameters."),
            rationale=(f"An enabling step: {', '.join(written)} ({size} bytes) is now produced first, so it "
                       "can sit next to the work around it — a producer moves beside its consumer for "
                       "fusion or inlining, two blocks of the same shape become adjacent for concatenation, "
                       "or reads of a shared input come closer together for cache reuse."),
            exactness="Exact (E): each computes the same values from the same inputs in either order.",
        )
