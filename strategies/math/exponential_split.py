"""exponential_split (catalogue #38): ``exp(U-V)`` becomes ``exp(U-s)*exp(s-V)`` for an existing ``s``."""

from __future__ import annotations

from leir.ast import BinOp, Call, Expr, IfThenElse, Program, TensorRef, expr_children, strip_parens
from leir.printer import canonical, expr_text
from leir.rewrite import statement_at
from strategies.base import Exactness, Level, NotApplicableError, Params, ParamSpec, Site, Strategy
from strategies.math.splits import (
    Path,
    choice_ref,
    chosen_values,
    replace_in_statement,
    shift_values,
    statement_paths,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

FORMS = ("product", "quotient")


def exp_differences(value: Expr) -> list[tuple[Path, Call]]:
    """Every ``exp(U-V)`` in value position of an expression, pre-order, with its child-position path."""
    out: list[tuple[Path, Call]] = []
    stack: list[tuple[Expr, Path]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, TensorRef):
            continue  # indices hold no values to split
        if isinstance(node, Call) and node.func == "exp":
            diff = strip_parens(node.args[0])
            if isinstance(diff, BinOp) and diff.op == "-":
                out.append((path, node))
        kids = expr_children(node)
        first = 1 if isinstance(node, IfThenElse) else 0  # a condition is not a value
        for k in range(len(kids) - 1, first - 1, -1):
            stack.append((kids[k], path + (k,)))  # type: ignore[arg-type]
    return out


@register
class ExponentialSplit(Strategy):
    """Split ``exp(U-V)`` through an existing value ``s``: ``exp(U-s)*exp(s-V)`` (or ``exp(U-s)/exp(V-s)``).

    Before: ``B^{16}_{tx=0}[L^{256}_{a=0}[F^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,F^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});];D^{f32,g}_{tx}=F^{f32,g}_{tx,255};];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];``
    After:  ``B^{16}_{tx=0}[L^{256}_{a=0}[F^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,F^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});];D^{f32,g}_{tx}=F^{f32,g}_{tx,255};];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-F^{f32,g}_{tx,a})*exp(F^{f32,g}_{tx,a}-D^{f32,g}_{tx});];``
    (``F`` the running max that normal_loop_max_to_prefix_max wrote in the first block.)

    Precondition: a call ``exp(U-V)`` in value position of a statement. The parameter ``s`` is one
    of the values that exist there and share the exponent's scale: a max/min reduction or running-max
    result of an earlier block over loops of the same extents (or its copy), or a tensor the exponent
    reads — never ``U`` or ``V`` themselves, and never a value that may be infinite (a max over masked
    ``-inf`` scores: ``exp(-inf-(-inf))`` is NaN); ``form`` picks the product or the quotient form.
    Numerically equivalent (N): ``exp(U-s)*exp(s-V) = exp(U-V)`` in real arithmetic; in floating point
    the two factors round separately and can overflow or underflow when ``s`` is far from ``U`` and
    ``V`` (the verifier's tolerance and special values decide).
    """

    number = 38
    name = "exponential_split"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {"not-exp-difference": "the site names no exp(U-V) in value position of the statement",
                "no-value": "no existing value s (or not the one asked for) shares the exponent's scale there"}

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path in statement_paths(program):
            stmt = statement_at(program.body, path)
            for epath, call in exp_differences(stmt.value):
                try:
                    _call, values = self.check(program, Site(path, (("exp", epath),)))
                except NotApplicableError:
                    continue
                if values:
                    sites.append(Site(path, (("exp", epath),),
                                      (ParamSpec("s", values, "the existing value to shift by"),
                                       ParamSpec("form", FORMS, "exp(U-s)*exp(s-V) or exp(U-s)/exp(V-s)")),
                                      where=f"{expr_text(call)} in {stmt.target.name}'s statement"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Call, tuple[str, ...]]:
        """The ``exp(U-V)`` call and the values ``s`` to shift by (the one asked for, with ``params``)."""
        stmt = statement_at(program.body, site.path)
        found = dict(exp_differences(stmt.value))
        call = found.get(tuple(site.get("exp")))
        if call is None:
            raise self.refuse("not-exp-difference", "the site is not an exp of a difference", site)
        diff = strip_parens(call.args[0])
        assert isinstance(diff, BinOp)
        exclude = {expr_text(diff.left), expr_text(diff.right)}
        values = tuple(t for t in (expr_text(r) for r in shift_values(program, site.path, diff))
                       if t not in exclude)
        return call, chosen_values(self, site, values, params, f"besides U and V to shift {expr_text(call)} by")

    def _split(self, program: Program, site: Site, params: Params) -> tuple[Call, Expr]:
        call, _values = self.check(program, site, params)
        diff = strip_parens(call.args[0])
        assert isinstance(diff, BinOp)
        s = choice_ref(program, site.path, str(params["s"]))
        first = Call("exp", (BinOp("-", diff.left, s),))
        if params.get("form", "product") == "quotient":
            new: Expr = BinOp("/", first, Call("exp", (BinOp("-", diff.right, s),)))
        else:
            new = BinOp("*", first, Call("exp", (BinOp("-", s, diff.right),)))
        return call, new

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        _, new = self._split(program, site, params)
        return replace_in_statement(program, site.path, tuple(site.get("exp")), new)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        call, new = self._split(before, site, params)
        s = str(params["s"])
        t = TraceBuilder()
        stmt = statement_at(before.body, site.path)
        changed = statement_at(after.body, site.path)
        new_text = expr_text(new)
        shown = t.after(new_text) if new_text in canonical(after.body) else new_text
        return t.build(
            applicability=(f"{t.before(canonical(stmt))} computes {t.before(expr_text(call))}, the exp of a "
                           f"difference, and {t.before(s)} is a value that already exists there."),
            change=(f"{expr_text(call)} becomes {shown} ({params.get('form', 'product')} "
                    f"form), giving {t.after(canonical(changed))}; parameter s={s}."),
            rationale=("An enabling step for online softmax: with s a running maximum, exp(U-s) stays at "
                       "most 1 and the second factor is the correction exp(s-V) that the fused "
                       "running-sum recurrence (#41/#42) applies when the maximum changes; with s a "
                       "reduction result it re-centres the exponent. On its own it costs one more exp."),
            exactness=("Numerically equivalent (N): the identity exp(U-s)*exp(s-V) = exp(U-V) holds in real "
                       "arithmetic; in floating point each factor rounds separately and can overflow or "
                       "underflow when s is far from U and V."),
        )
