"""loop_reorder (catalogue #10): two loops of one header swap places."""

from __future__ import annotations

from leir.analysis import CarriedStatement, carried_statements, shared_tensor_vars
from leir.ast import Block, Program
from leir.gpu_limits import is_block_axis
from leir.printer import loop_text
from leir.rewrite import block_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block, header_text
from strategies.loop.nest import LOOP_SITE_REFUSALS, enclosing_loops, find_loop, rebuild
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Loop kinds a reorder moves: ``P`` and ``V`` keep their place (moving them changes what runs in
#: parallel or in vector lanes, which their own strategies decide).
_MOVABLE = frozenset("LUB")


@register
class LoopReorder(Strategy):
    """Swap two loops of one block header (the loops between them stay in place).

    From level1/view_permute:

    Before: ``B^{2}_{tx=0}L^{8}_{a=0}L^{12}_{c=0}L^{8}_{d=0}[C^{f32,g}_{tx,a,c,d}=A^{f32,g}_{tx,d,a,c};];``
    After:  ``B^{2}_{tx=0}L^{12}_{c=0}L^{8}_{a=0}L^{8}_{d=0}[C^{f32,g}_{tx,a,c,d}=A^{f32,g}_{tx,d,a,c};];``

    Precondition: both loops have at least 2 iterations; the loops from the first to the second are ``L``, ``U`` or ``B``; no tensor is
    accessed by two statements of the block at different subscripts over them; every statement carries a
    dependence along at most one of them — or along several only when it is a reduction whose partial
    values nothing else in the block reads; a blockIdx-bound loop never ends up inside a threadIdx-bound
    one. Exactness per site: when the exchange changes the order of two reduction loops of one statement,
    its terms are summed in another order (N); otherwise each element sees the same operations in the
    same order (E).
    """

    number = 10
    name = "loop_reorder"
    level = Level.LOOP
    exactness = None
    refusals = {
        **LOOP_SITE_REFUSALS,
        "not-outside": "the site's outer loop is not outside its inner loop in the header",
        "cannot-reorder-loops": "a loop of the span has a single iteration or is P or V, the swap would put a "
                                "blockIdx loop inside a threadIdx loop, or it changes which values a statement reads",
    }

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        from strategies.common import blocks

        for path, block in blocks(program):
            for i in range(len(block.loops)):
                for j in range(i + 1, len(block.loops)):
                    a, c = block.loops[i].var, block.loops[j].var
                    site = Site(path, (("inner", c), ("outer", a)),
                                where=f"the loops over {a} and {c} in {describe_block(path)}")
                    if self.legal(program, site):
                        sites.append(site)
        return sites

    def _problem(self, program: Program, path: tuple[int, ...], block: Block, i: int, j: int) -> str | None:
        span = block.loops[i:j + 1]
        unit = [lp for lp in (block.loops[i], block.loops[j]) if lp.extent < 2]
        if unit:
            return f"the loop {loop_text(unit[0])} has a single iteration; moving it changes no order"
        fixed = [lp for lp in span if lp.kind not in _MOVABLE]
        if fixed:
            return f"the loop {loop_text(fixed[0])} is {fixed[0].kind}; only L, U and B loops are reordered"
        swapped = block.loops[:i] + (block.loops[j],) + block.loops[i + 1:j] + (block.loops[i],) \
            + block.loops[j + 1:]
        bound = [lp for lp in enclosing_loops(program, path) + swapped if lp.kind == "B"]
        for k, lp in enumerate(bound):
            if is_block_axis(lp.var) and any(not is_block_axis(o.var) for o in bound[:k]):
                return f"the blockIdx loop {loop_text(lp)} would sit inside a threadIdx loop"
        names = {lp.var for lp in span}
        shared = shared_tensor_vars(block) & names
        if shared:
            return (f"two statements exchange values through a tensor indexed by {', '.join(sorted(shared))}"
                    ": the order of those iterations matters")
        for entry in carried_statements(program, path):
            along = entry.carried & names
            if len(along) > 1 and not self._reorderable_reduction(entry, along, block):
                return (f"{entry.stmt.target.name} depends on earlier iterations along "
                        f"{' and '.join(sorted(along))}; swapping them changes what it reads")
        return None

    @staticmethod
    def _reorderable_reduction(entry: CarriedStatement, along: frozenset[str], block: Block) -> bool:
        from leir.analysis import item_statements, reads, writes

        if entry.kind.value != "reduce" or not along <= set(entry.reduce_vars):
            return False
        name = entry.stmt.target.name
        others = [s for _, s, _ in item_statements(block) if s is not entry.stmt]
        return not any(name in reads(s) or name in writes(s) for s in others)

    def _positions(self, program: Program, site: Site) -> tuple[Block, int, int]:
        block, i, _ = find_loop(self, program, site.path, site.get("outer"))
        _, j, _ = find_loop(self, program, site.path, site.get("inner"))
        if i >= j:
            raise self.refuse("not-outside", f"the loop over {site.get('outer')} is not outside the loop over "
                              f"{site.get('inner')}", site)
        return block, i, j

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, int]:
        """The block and the positions of the two loops to swap, or a refusal."""
        block, i, j = self._positions(program, site)
        problem = self._problem(program, site.path, block, i, j)
        if problem:
            raise self.refuse("cannot-reorder-loops", problem, site)
        return block, i, j

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, i, j = self.check(program, site, params)
        loops = block.loops[:i] + (block.loops[j],) + block.loops[i + 1:j] + (block.loops[i],) \
            + block.loops[j + 1:]
        return rebuild(program, site.path, block, loops)

    def _reordered_reductions(self, program: Program, site: Site) -> list[tuple[str, list[str]]]:
        """``(tensor, its reduction axes among the loops the exchange reorders)`` for every reduction
        whose terms change order: one of the two exchanged loops is among its reduction axes and another
        reduction axis lies between them (or is the other one) — only then do two of its axes swap."""
        block, i, j = self._positions(program, site)
        span = [lp.var for lp in block.loops[i:j + 1]]
        swapped = {block.loops[i].var, block.loops[j].var}
        found = []
        for e in carried_statements(program, site.path):
            if e.kind.value != "reduce":
                continue
            axes = [v for v in span if v in set(e.reduce_vars)]
            if len(axes) > 1 and swapped & set(axes):
                found.append((e.stmt.target.name, axes))
        return found

    def exactness_at(self, program: Program, site: Site, params: Params) -> Exactness:
        return Exactness.N if self._reordered_reductions(program, site) else Exactness.E

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        block, i, j = self._positions(before, site)
        new = block_at(after.body, site.path)
        outer, inner = block.loops[i], block.loops[j]
        t = TraceBuilder()
        where = describe_block(site.path)
        reductions = self._reordered_reductions(before, site)
        strides = _strides(block, outer.var, inner.var)
        rationale = (f"The innermost-varying index changes from {block.loops[-1].var} to {new.loops[-1].var}"
                     if j == len(block.loops) - 1 else
                     f"The {inner.extent} iterations over {inner.var} now enclose the {outer.extent} over "
                     f"{outer.var}")
        rationale += (f"; the block runs {_trips(block)} iterations either way. {strides} Reordering also "
                      "brings a loop into the position where a later split, tile, vectorisation or binding "
                      "wants it.")
        if reductions:
            parts = "; ".join(f"{name} reduces along {' and '.join(axes)}" for name, axes in reductions)
            exact = (f"Numerically equivalent (N): {parts}, and the exchange of {outer.var} and {inner.var} "
                     "changes the order of those reduction loops, so the terms are added in another order; "
                     "the result agrees within the dtype tolerance, not bitwise.")
        else:
            exact = ("Exact (E): every output element receives the same operations in the same order (the "
                     "exchange swaps no two reduction loops of any statement), so the outputs are bitwise "
                     "identical.")
        return t.build(
            applicability=(f"In {where} the header {t.before(header_text(block.loops))} has the loops "
                           f"{t.before(loop_text(outer))} and {t.before(loop_text(inner))}; no dependence "
                           "forbids exchanging them."),
            change=(f"{t.before(header_text(block.loops))} becomes {t.after(header_text(new.loops))}; "
                    "no parameters."),
            rationale=rationale,
            exactness=exact,
        )


def _trips(block: Block) -> int:
    n = 1
    for lp in block.loops:
        n *= lp.extent
    return n


def _strides(block: Block, outer: str, inner: str) -> str:
    """A sentence on how far consecutive iterations of each loop move in the tensors they index."""
    from leir.analysis import affine_form, item_statements, stmt_reads

    parts = []
    for _, stmt, _ in item_statements(block):
        for ref in (stmt.target, *stmt_reads(stmt)):
            if not ref.indices:
                continue
            last = affine_form(ref.indices[-1])
            if last is None:
                continue
            for var in (outer, inner):
                if last.coeff(var) == 1 and all((affine_form(x) or last).coeff(var) == 0
                                                for x in ref.indices[:-1]):
                    parts.append(f"{ref.name} is contiguous along {var}")
        if len(parts) >= 3:
            break
    unique = list(dict.fromkeys(parts))
    return (", ".join(unique) + ".") if unique else "Neither loop walks the last subscript of a tensor."
