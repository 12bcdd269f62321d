"""tensor_split_to_decouple_operators (catalogue #6): a one-statement block is computed in two halves."""

from __future__ import annotations

from leir.analysis import fresh_tensor_names, injective_subscript, iterations, program_info, tensor_bytes
from leir.ast import Assign, Block, Expr, Loop, Program, TensorRef, Var, walk_expr
from leir.builders import add, cmp, iadd, isub, ite, maximum, minimum, mul
from leir.printer import canonical, loop_text
from leir.rewrite import replace_at, replace_refs, substitute_vars, with_body
from leir.semantics import StmtKind
from strategies.base import (
    Exactness,
    Level,
    Params,
    ParamSpec,
    Site,
    Strategy,
    int_param,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

_COMBINE = {"+": add, "-": add, "*": mul, "max": maximum, "min": minimum}


def split_points(extent: int) -> tuple[int, ...]:
    """Where an axis may be cut: the middle first, then the quarter points (all strictly inside)."""
    points = [extent // 2]
    if extent % 4 == 0:
        points += [extent // 4, 3 * extent // 4]
    return tuple(p for p in dict.fromkeys(points) if 0 < p < extent)


def _lhs_vars(stmt: Assign) -> frozenset[str]:
    return frozenset(v.name for i in stmt.target.indices for v in walk_expr(i) if isinstance(v, Var))


@register
class TensorSplitToDecoupleOperators(Strategy):
    """Cut one axis of a one-statement block at a point: the halves run as separate blocks, then join.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];``
    After:  ``B^{16}_{tx=0}L^{128}_{a=0}[D^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];B^{16}_{tx=0}L^{128}_{a=0}[E^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a+128});];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=if_then_else(a<128,D^{f32,g}_{tx,a},E^{f32,g}_{tx,a-128});];``

    Precondition: a top-level block with one statement that is a plain write or an element-wise update
    (its subscript names a distinct element per iteration), or a reduction with a recognised combiner
    (its subscript distinct per spatial iteration); the axis has extent ≥ 2. A spatial axis (in the
    subscript) gives two halves written to fresh tensors and a join; a reduction axis gives two partial
    reductions and a combining statement. Parameter ``at``: the cut point.
    Exactness per site: spatial axis E (each element computed once, the same way); reduction axis N
    (the partial results are combined in a different order).
    """

    number = 6
    name = "tensor_split_to_decouple_operators"
    level = Level.GRAPH
    exactness = None
    refusals = {
        "not-single-statement": "the block does not hold exactly one statement",
        "prefix-recurrence": "the statement is a prefix recurrence (each element reads the one before)",
        "no-combiner": "the reduction's combining operation has no recognised partial form",
        "target-not-distinct": "the reduction's target is not one element per spatial iteration",
        "written-twice": "the statement writes some element more than once",
        "no-such-loop": "the header has no loop over the axis with extent >= 2 (or it is neither in the "
                        "target's subscript nor reduced)",
        "illegal-cut": "the cut point asked for is outside 1..extent-1",
    }

    def _stmt(self, program: Program, index: int) -> tuple[Block, Assign, StmtKind, str | None]:
        block = program.body.blocks[index]
        if len(block.items) != 1 or not isinstance(block.items[0], Assign):
            raise self.refuse("not-single-statement", f"block {index + 1} is not a single statement")
        stmt = block.items[0]
        sinfo = program_info(program).statements[(index, 0)]
        lhs = _lhs_vars(stmt)
        if sinfo.kind is StmtKind.RECURRENCE:
            raise self.refuse("prefix-recurrence", f"{canonical(stmt)} is a prefix recurrence")
        if sinfo.kind is StmtKind.REDUCE:
            if sinfo.combiner not in _COMBINE:
                raise self.refuse("no-combiner", "the reduction has no recognised combiner")
            spatial = tuple(lp for lp in block.loops if lp.var in lhs)
            if not injective_subscript(stmt.target.indices, spatial):
                raise self.refuse("target-not-distinct",
                                  f"{canonical(stmt.target)} is not distinct per spatial iteration")
        elif not injective_subscript(stmt.target.indices, block.loops):
            raise self.refuse("written-twice",
                              f"{canonical(stmt.target)} is written more than once per element")
        return block, stmt, sinfo.kind, sinfo.combiner

    def _axis(self, block: Block, var: str) -> Loop:
        for lp in block.loops:
            if lp.var == var and lp.extent >= 2:
                return lp
        raise self.refuse("no-such-loop", f"there is no loop over {var} of extent >= 2")

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for index, block in enumerate(program.body.blocks):
            for lp in block.loops:
                if not self.legal(program, Site((index,), (("axis", lp.var),))):
                    continue
                stmt = block.items[0]
                assert isinstance(stmt, Assign)
                axis = "spatial" if lp.var in _lhs_vars(stmt) else "reduction"
                sites.append(Site((index,), (("axis", lp.var),),
                                  (ParamSpec("at", split_points(lp.extent), "the cut point"),),
                                  where=f"the {axis} loop over {lp.var} of block {index + 1}"))
        return sites

    def exactness_at(self, program: Program, site: Site, params: Params) -> Exactness:
        stmt = program.body.blocks[site.path[0]].items[0]
        assert isinstance(stmt, Assign)
        return Exactness.E if site.get("axis") in _lhs_vars(stmt) else Exactness.N

    def check(self, program: Program, site: Site,
              params: Params | None = None) -> tuple[Block, Assign, StmtKind, str | None, Loop]:
        """The block, its statement, the statement's kind and combiner and the loop to cut, or a refusal."""
        (index,) = site.path
        block, stmt, kind, combiner = self._stmt(program, index)
        lp = self._axis(block, str(site.get("axis")))
        if lp.var not in _lhs_vars(stmt) and kind is not StmtKind.REDUCE:
            raise self.refuse("no-such-loop", f"the loop over {lp.var} is neither in the target's subscript "
                              "nor reduced", site)
        if params is not None:
            at = int_param(params, "at")
            if not 0 < at < lp.extent:
                raise self.refuse("illegal-cut", f"cut point {at} is outside 1..{lp.extent - 1}", site)
        return block, stmt, kind, combiner, lp

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, stmt, kind, combiner, lp = self.check(program, site, params)
        (index,) = site.path
        at = int_param(params, "at")
        first, second = fresh_tensor_names(program, 2)
        name, subscript, var = stmt.target.name, stmt.target.indices, lp.var
        shifted: dict[str, Expr] = {var: iadd(Var(var), at)}

        def loops_with(extent: int) -> tuple[Loop, ...]:
            return tuple(Loop(x.kind, extent, x.var) if x.var == var else x for x in block.loops)

        def half(new: str, extent: int, shift: bool) -> Block:
            value = substitute_vars(stmt.value, shifted) if shift else stmt.value
            if kind is StmtKind.REDUCE:  # its self-reads are at the (unshifted) target subscript
                value = replace_refs(value, lambda r: TensorRef(new, r.dtype, "g", subscript)
                                     if r.name == name else None)
            target = TensorRef(new, stmt.target.dtype, "g", subscript)
            return Block(loops_with(extent), (Assign(target, value),))  # type: ignore[arg-type]

        spatial = var in _lhs_vars(stmt)
        blocks = (half(first, at, False), half(second, lp.extent - at, True))
        outer = tuple(x for x in block.loops if x.var in _lhs_vars(stmt)) or (Loop("L", 1, "a"),)
        ref_a = TensorRef(first, stmt.target.dtype, "g", subscript)
        if spatial:
            back = tuple(substitute_vars(i, {var: isub(Var(var), at)}) for i in subscript)
            ref_b = TensorRef(second, stmt.target.dtype, "g", back)  # type: ignore[arg-type]
            value: Expr = ite(cmp(Var(var), "<", at), ref_a, ref_b)
        else:
            ref_b = TensorRef(second, stmt.target.dtype, "g", subscript)
            value = _COMBINE[str(combiner)](ref_a, ref_b)
        join = Block(outer, (Assign(stmt.target, value),))
        return with_body(program, replace_at(program.body, (index,), (*blocks, join)))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        (index,) = site.path
        block, stmt, kind, combiner = self._stmt(before, index)
        lp = self._axis(block, str(site.get("axis")))
        at = int_param(params, "at")
        one, two, join = after.body.blocks[index:index + 3]
        halves = [b.items[0].target.name for b in (one, two)]  # type: ignore[union-attr]
        extra = sum(tensor_bytes(after, n) for n in halves)
        t = TraceBuilder()
        spatial = lp.var in _lhs_vars(stmt)
        axis = "spatial" if spatial else "reduction"
        if spatial:
            why = (f"The two halves ({iterations(one.loops)} and {iterations(two.loops)} iterations) are "
                   "independent blocks: each can be scheduled, placed or fused with its own neighbours "
                   f"(decoupled), at the cost of {extra} bytes of half-tensors {' and '.join(halves)} and "
                   f"one join pass over {stmt.target.name} ({tensor_bytes(before, stmt.target.name)} bytes).")
            exact = ("Exact (E): the cut is on a spatial axis, so every element is computed once, by the "
                     "same operations, and copied unchanged.")
        else:
            why = (f"The reduction over {lp.var} ({lp.extent} terms) becomes two independent partial "
                   f"reductions of {at} and {lp.extent - at} terms into {' and '.join(halves)} ({extra} "
                   "bytes) that can run in parallel, combined by one more statement.")
            exact = (f"Numerically equivalent (N): the {combiner} reduction over {lp.var} is regrouped into "
                     "two partial results, so floating-point rounding may differ.")
        return t.build(
            applicability=(f"Block {index + 1} is the single statement {t.before(canonical(block))}; the "
                           f"{axis} loop {t.before(loop_text(lp))} can be cut."),
            change=(f"Cut at {lp.var}={at}: {t.after(canonical(one))} and {t.after(canonical(two))} compute "
                    f"the halves, then {t.after(canonical(join))}; parameter at={at}."),
            rationale=why,
            exactness=exact,
        )
