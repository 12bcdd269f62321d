"""common_subexpression_elimination (catalogue #7): a repeated sub-expression is computed once and reused."""

from __future__ import annotations

from collections import defaultdict

from leir.analysis import fresh_tensor_names, iterations
from leir.ast import Call, Program, walk_expr
from leir.printer import canonical, expr_text
from leir.rewrite import item_at, statement_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block
from strategies.graph.hoisting import (
    Occurrence,
    hoist,
    intermediate_bytes,
    occurrences,
    reads_stable,
    used_vars,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def _extents(occ: Occurrence) -> tuple[tuple[str, int], ...]:
    names = used_vars(occ.node)
    return tuple(sorted((lp.var, lp.extent) for lp in occ.loops if lp.var in names))


@register
class CommonSubexpressionElimination(Strategy):
    """Compute a sub-expression that appears more than once into one intermediate, read everywhere.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[F^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+F^{f32,g}_{tx,a};];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=F^{f32,g}_{tx,a}/E^{f32,g}_{tx};];``

    Precondition: the same compound sub-expression (a call, a product, any arithmetic on tensors — the
    catalogue names calls and products; a repeated difference such as ``A-G`` is the same situation)
    occurs at least twice, every occurrence hoistable (not under an ``if_then_else``, not reading its
    statement's target), its loop variables with the same extents everywhere, all in statements of one
    float dtype, and nothing from the first occurrence's block to the last one's writes what it reads.
    The intermediate is computed just before the first occurrence's top-level block.
    Exact (E): each occurrence read the same value the intermediate now stores, in the same dtype.
    """

    number = 7
    name = "common_subexpression_elimination"
    level = Level.GRAPH
    exactness = Exactness.E
    refusals = {"fewer-than-two": "the sub-expression occurs fewer than twice where it could be hoisted",
                "cannot-hoist": "its occurrences compute in different dtypes, over loops of different extents, "
                                "or read a tensor written between them"}

    def _groups(self, program: Program) -> dict[str, tuple[Occurrence, ...]]:
        groups: dict[str, list[Occurrence]] = defaultdict(list)
        for occ in occurrences(program):
            groups[expr_text(occ.node)].append(occ)
        legal = {}
        for text, occs in groups.items():
            if len(occs) >= 2 and self._problem(program, tuple(occs)) is None:
                legal[text] = tuple(occs)
        return legal

    def _problem(self, program: Program, occs: tuple[Occurrence, ...]) -> str | None:
        dtypes = {item_at(program.body, o.stmt_path).target.dtype for o in occs}  # type: ignore[union-attr]
        if len(dtypes) > 1:
            return f"the occurrences sit in statements of different dtypes ({', '.join(sorted(dtypes))})"
        if len({_extents(o) for o in occs}) > 1:
            return "its loop variables have different extents at different occurrences"
        first, last = min(o.stmt_path[0] for o in occs), max(o.stmt_path[0] for o in occs)
        return reads_stable(program, occs[0].node, first, last)

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for text, occs in self._groups(program).items():
            blocks = sorted({describe_block(o.stmt_path[:1]) for o in occs})
            sites.append(Site(occs[0].stmt_path, (("subexpression", text),),
                              where=f"the {len(occs)} occurrences of {text} in {', '.join(blocks)}"))
        return sites

    def _occurrences(self, program: Program, site: Site) -> tuple[Occurrence, ...]:
        text = site.get("subexpression")
        occs = tuple(o for o in occurrences(program) if expr_text(o.node) == text)
        if len(occs) < 2:
            raise self.refuse("fewer-than-two", f"{text} occurs {len(occs)} time(s) where it could be hoisted, "
                              "not twice", site)
        problem = self._problem(program, occs)
        if problem:
            raise self.refuse("cannot-hoist", problem, site)
        return occs

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Occurrence, ...]:
        """The occurrences to hoist into one tensor, or a refusal (``candidates`` groups by the same rule)."""
        return self._occurrences(program, site)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        occs = self.check(program, site, params)
        (name,) = fresh_tensor_names(program)
        return hoist(program, occs, name).program

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        occs = self._occurrences(before, site)
        (name,) = fresh_tensor_names(before)
        hoisted = hoist(before, occs, name)
        text = site.get("subexpression")
        stmts = []
        for o in occs:
            stmt = statement_at(before.body, o.stmt_path)
            if canonical(stmt) not in stmts:
                stmts.append(canonical(stmt))
        evaluations = sum(iterations(o.loops) for o in occs)
        once = iterations(hoisted.block.loops)
        calls = sum(1 for n in walk_expr(occs[0].node) if isinstance(n, Call))
        size = intermediate_bytes(hoisted.block, hoisted.ref.dtype)
        t = TraceBuilder()
        quoted = " and ".join(t.before(s) for s in stmts)
        call_note = (f" ({calls} call(s) each, so {evaluations * calls} calls become {once * calls})"
                     if calls else "")
        return t.build(
            applicability=(f"The sub-expression {t.before(text)} occurs {len(occs)} times, in {quoted}; "
                           "nothing between its first and last use writes what it reads, and its loop "
                           "variables have the same extents at every occurrence."),
            change=(f"It is computed once by the new block {t.after(canonical(hoisted.block))} and every "
                    f"occurrence reads {t.after(canonical(hoisted.ref))} instead; no parameters."),
            rationale=(f"The occurrences evaluate it {evaluations} times in all; the new block evaluates it "
                       f"{once} times{call_note}, for a {size}-byte intermediate {hoisted.ref.name} written "
                       f"once and read at each former occurrence."),
            exactness=(f"Exact (E): every occurrence read the value {hoisted.ref.name} now stores, computed "
                       f"with the same operations in {hoisted.ref.dtype}."),
        )
