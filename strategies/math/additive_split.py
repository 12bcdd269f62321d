"""additive_split (catalogue #40): an operand ``X`` becomes ``X+s-s`` with ``s`` a value in scope."""

from __future__ import annotations

from leir.ast import BinOp, Program
from leir.printer import canonical, expr_text
from leir.rewrite import statement_at
from strategies.base import Exactness, Level, NotApplicableError, Params, ParamSpec, Site, Strategy
from strategies.math.splits import (
    Operand,
    choice_ref,
    chosen_values,
    find_operand,
    replace_in_statement,
    statement_paths,
    value_choices,
    value_operands,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@register
class AdditiveSplit(Strategy):
    """Add and subtract an existing value around one operand: ``X`` becomes ``X+s-s``.

    Before: ``B^{16}_{tx=0}[L^{256}_{a=0}[F^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,F^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});];D^{f32,g}_{tx}=F^{f32,g}_{tx,255};];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];``
    After:  ``B^{16}_{tx=0}[L^{256}_{a=0}[F^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,F^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});];D^{f32,g}_{tx}=F^{f32,g}_{tx,255};];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}+F^{f32,g}_{tx,a}-F^{f32,g}_{tx,a}-D^{f32,g}_{tx});];``
    (with ``F`` the running max a normal_loop_max_to_prefix_max step wrote in the first block.)

    Precondition: a tensor read in value position of a statement (not an index, not a condition, not
    the statement's own accumulator). The parameter ``s`` is one of the values that exist there, in a
    stable order: a reduction or recurrence result of an earlier block whose subscript names enclosing
    loops of the same extents (statistics first), or a tensor the statement already reads.
    Numerically equivalent (N): ``X+s-s`` equals ``X`` in real arithmetic; in floating point the sum
    rounds, losing the low bits of ``X`` when ``|s|`` is much larger.
    """

    number = 40
    name = "additive_split"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {"not-value-operand": "the site names no tensor read in value position of the statement",
                "no-value": "no existing value s (or not the one asked for) can be added and subtracted there"}

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path in statement_paths(program):
            stmt = statement_at(program.body, path)
            for op in value_operands(stmt):
                try:
                    _op, values = self.check(program, Site(path, (("operand", op.expr_path),)))
                except NotApplicableError:
                    continue
                sites.append(Site(path, (("operand", op.expr_path),),
                                  (ParamSpec("s", values, "the existing value added and subtracted"),),
                                  where=f"the operand {expr_text(op.ref)} of {stmt.target.name}'s statement"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Operand, tuple[str, ...]]:
        """The operand and the values ``s`` it may be split by (the one asked for, with ``params``)."""
        stmt = statement_at(program.body, site.path)
        op = find_operand(stmt, tuple(site.get("operand")))
        if op is None:
            raise self.refuse("not-value-operand", "the site is not a value operand of the statement", site)
        values = value_choices(program, site.path, {expr_text(op.ref)})
        return op, chosen_values(self, site, values, params, f"to add to and subtract from {expr_text(op.ref)}")

    def _split(self, program: Program, site: Site, params: Params) -> tuple[BinOp, str]:
        op, _values = self.check(program, site, params)
        s = choice_ref(program, site.path, str(params["s"]))
        return BinOp("-", BinOp("+", op.ref, s), s), expr_text(op.ref)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        new, _ = self._split(program, site, params)
        return replace_in_statement(program, site.path, tuple(site.get("operand")), new)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        new, x = self._split(before, site, params)
        s = str(params["s"])
        t = TraceBuilder()
        stmt = statement_at(before.body, site.path)
        changed = statement_at(after.body, site.path)
        return t.build(
            applicability=(f"{t.before(canonical(stmt))} reads {t.before(x)} as a value, and {t.before(s)} is a "
                           "value that already exists there (an earlier block's result over the same loops, "
                           "or a tensor the statement reads)."),
            change=(f"{x} becomes {t.after(expr_text(new))}, giving {t.after(canonical(changed))}; "
                    f"parameter s={s}."),
            rationale=(f"An enabling step: {x} is now expressed relative to {s}, so a later algebraic step "
                       f"(exponential_split, collect, factorization) can regroup {x}-{s} and {s} separately "
                       "— the shift that online softmax's rescaling by a running maximum starts from. On its "
                       "own it adds two operations per evaluation."),
            exactness=(f"Numerically equivalent (N): {x}+{s}-{s} equals {x} in real arithmetic; in floating "
                       f"point the sum rounds, losing low bits of {x} when |{s}| is much larger."),
        )
