"""expression_splitting (catalogue #4): a sub-expression moves into its own intermediate block."""

from __future__ import annotations

from leir.analysis import fresh_tensor_names, iterations
from leir.ast import Assign, Program, statements, tensor_refs
from leir.printer import canonical, expr_text
from leir.rewrite import expr_at, item_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block, header_text
from strategies.graph.hoisting import (
    Occurrence,
    hoist,
    hoist_loops,
    intermediate_bytes,
    occurrences,
    reads_stable,
    value_subexpressions,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@register
class ExpressionSplitting(Strategy):
    """Hoist one sub-expression (a call or a term) of a statement into a new intermediate.

    Before: ``B^{4}_{tx=0}L^{16}_{a=0}L^{64}_{c=0}[J^{f32,g}_{tx,a,c}=(A^{f32,g}_{tx,a,c}-G^{f32,g}_{tx})/sqrt(I^{f32,g}_{tx}+1e-05);];``
    After:  ``B^{4}_{tx=0}[C^{f32,g}_{tx}=sqrt(I^{f32,g}_{tx}+1e-05);];B^{4}_{tx=0}L^{16}_{a=0}L^{64}_{c=0}[J^{f32,g}_{tx,a,c}=(A^{f32,g}_{tx,a,c}-G^{f32,g}_{tx})/C^{f32,g}_{tx};];``

    Precondition: the sub-expression is compound and reads a tensor; it is not the whole right-hand
    side, not under an ``if_then_else`` branch or condition (lazily evaluated), not in a subscript; it
    does not read the statement's own target nor anything its top-level block writes; the statement
    computes in a float dtype. The new block runs the loops whose variables the sub-expression uses, in
    header order, just before the statement's top-level block.
    Exact (E): the same operations in the statement's dtype, stored in that dtype and read back.
    """

    number = 4
    name = "expression_splitting"
    level = Level.GRAPH
    exactness = Exactness.E
    refusals = {"no-statement": "the site's path names no statement",
                "unstable-reads": "the sub-expression reads a tensor its own block writes",
                "not-separable": "the position names no compound value sub-expression of the statement"}

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for occ in occurrences(program):
            if occ.expr_path and reads_stable(program, occ.node, occ.stmt_path[0], occ.stmt_path[0]) is None:
                sites.append(self._site(occ))
        return sites

    def _site(self, occ: Occurrence) -> Site:
        text = expr_text(occ.node)
        return Site(occ.stmt_path, (("expr", occ.expr_path), ("subexpression", text)),
                    where=f"the sub-expression {text} in {describe_block(occ.stmt_path[:-1])}")

    def _occurrence(self, program: Program, site: Site) -> Occurrence:
        stmt = item_at(program.body, site.path)
        if not isinstance(stmt, Assign):
            raise self.refuse("no-statement", f"no statement at {site.key}", site)
        expr_path = tuple(site.get("expr", ()))
        for path, node in value_subexpressions(stmt):
            if path == expr_path and path:
                loops = next(lp for p, _, lp in statements(program.body) if p == site.path)
                occ = Occurrence(site.path, path, node, loops)
                why = reads_stable(program, node, site.path[0], site.path[0])
                if why:
                    raise self.refuse("unstable-reads", why, site)
                return occ
        raise self.refuse("not-separable", f"position {expr_path} of the statement is not a separable "
                          "sub-expression", site)

    def check(self, program: Program, site: Site, params: Params | None = None) -> Occurrence:
        """The sub-expression to move into its own block, or a refusal."""
        return self._occurrence(program, site)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        occ = self.check(program, site, params)
        (name,) = fresh_tensor_names(program)
        return hoist(program, (occ,), name).program

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        occ = self._occurrence(before, site)
        stmt = item_at(before.body, site.path)
        new_stmt = item_at(after.body, (site.path[0] + 1,) + site.path[1:])
        new_block = after.body.blocks[site.path[0]]
        assert isinstance(stmt, Assign) and isinstance(new_stmt, Assign)
        ref = new_block.items[0].target  # type: ignore[union-attr]
        loops = hoist_loops(occ.node, occ.loops)
        before_count, after_count = iterations(occ.loops), iterations(new_block.loops)
        size = intermediate_bytes(new_block, ref.dtype)
        sub = expr_text(expr_at(stmt.value, occ.expr_path))
        names = sorted({r.name for r in tensor_refs(occ.node)})
        t = TraceBuilder()
        dropped = [lp.var for lp in occ.loops if lp.var not in {x.var for x in loops}]
        if after_count < before_count:
            ratio = before_count // after_count
            why = (f"The sub-expression does not depend on the loop(s) over {', '.join(dropped)}, so it is "
                   f"evaluated {after_count} times instead of {before_count} (a {ratio}x reduction of that "
                   f"work) at the cost of a {size}-byte intermediate "
                   f"{ref.name} written once and read {before_count} times.")
        else:
            why = (f"It is evaluated {after_count} times either way; splitting it out into the {size}-byte "
                   f"intermediate {ref.name} is an enabling step: the new block can be scheduled, "
                   "cached or fused on its own, and the statement it came from gets simpler.")
        return t.build(
            applicability=(f"In {describe_block(site.path[:-1])} the statement {t.before(canonical(stmt))} "
                           f"contains the sub-expression {t.before(sub)}, which reads only "
                           f"{', '.join(names)} (nothing its block writes) and is not under an "
                           "if_then_else, so it has the same value when computed ahead."),
            change=(f"A new block {t.after(canonical(new_block))} computes it over "
                    f"{t.after(header_text(new_block.loops))} into {t.after(canonical(ref))}, and the "
                    f"statement becomes {t.after(canonical(new_stmt))}; no parameters."),
            rationale=why,
            exactness=("Exact (E): the same operations run in the statement's dtype "
                       f"{ref.dtype}, the value is stored in that dtype and read back unchanged."),
        )
