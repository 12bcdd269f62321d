"""multiplicative_split (catalogue #39): an operand ``X`` becomes ``X/s*s`` with ``s`` provably non-zero."""

from __future__ import annotations

from leir.ast import BinOp, Program
from leir.printer import canonical, expr_text
from leir.rewrite import statement_at
from strategies.base import Exactness, Level, NotApplicableError, Params, ParamSpec, Site, Strategy
from strategies.math.splits import (
    Operand,
    choice_ref,
    existing_values,
    find_operand,
    positive_proof,
    replace_in_statement,
    statement_paths,
    value_operands,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Operators under which an operand is already a factor of a product (not product-free).
PRODUCTS = ("*", "/")


@register
class MultiplicativeSplit(Strategy):
    """Divide and multiply one product-free operand by an existing non-zero value: ``X`` → ``X/s*s``.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}/E^{f32,g}_{tx}*E^{f32,g}_{tx}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];``
    (softmax; its second block writes ``E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(…)``, so ``E > 0``.)

    Precondition: a tensor read in value position that is not already a factor of a product or
    quotient (not an index, a condition, or the statement's accumulator), and an existing value ``s``
    (as in additive_split) that the sign analysis proves positive: every statement writing it computes
    ``exp(…)``, a positive literal, ``sqrt(…)+eps``/``abs(…)+eps`` with ``eps > 0``, a sum, product,
    quotient or ``max`` of such values, or a reduction of them. The proof is quoted in the trace;
    values it cannot prove are not offered, so the rewrite never divides by zero in exact arithmetic.
    Numerically equivalent (N): ``X/s*s`` rounds twice; ``exp`` can underflow to 0 in floating point,
    which the verifier's special-value inputs exercise.
    """

    number = 39
    name = "multiplicative_split"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {"not-value-operand": "the site names no tensor read in value position outside a product or "
                                     "quotient",
                "not-nonzero": "no existing value s (or not the one asked for) is provably non-zero there"}

    def _values(self, program: Program, path: tuple[int, ...], exclude: str) -> tuple[str, ...]:
        return tuple(expr_text(r) for r in existing_values(program, path)
                     if expr_text(r) != exclude and positive_proof(program, r) is not None)

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path in statement_paths(program):
            stmt = statement_at(program.body, path)
            for op in value_operands(stmt):
                try:
                    _op, values = self.check(program, Site(path, (("operand", op.expr_path),)))
                except NotApplicableError:
                    continue
                if values:
                    sites.append(Site(path, (("operand", op.expr_path),),
                                      (ParamSpec("s", values, "the provably non-zero value to divide and "
                                                              "multiply by"),),
                                      where=f"the operand {expr_text(op.ref)} of {stmt.target.name}'s "
                                            "statement"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Operand, tuple[str, ...]]:
        """The operand and the provably positive values ``s`` (the one asked for, with ``params``)."""
        stmt = statement_at(program.body, site.path)
        op = find_operand(stmt, tuple(site.get("operand")))
        if op is None or op.parent in PRODUCTS:
            raise self.refuse("not-value-operand", "the site is not a product-free value operand of the "
                              "statement", site)
        if params is not None:
            s = choice_ref(program, site.path, str(params["s"]))
            if positive_proof(program, s) is None:
                raise self.refuse("not-nonzero", f"{expr_text(s)} is not provably non-zero", site)
            return op, (expr_text(s),)
        values = self._values(program, site.path, expr_text(op.ref))
        if not values:
            raise self.refuse("not-nonzero", f"no existing value besides {expr_text(op.ref)} is provably "
                              "non-zero", site)
        return op, values

    def _split(self, program: Program, site: Site, params: Params) -> tuple[BinOp, str]:
        op, _values = self.check(program, site, params)
        s = choice_ref(program, site.path, str(params["s"]))
        return BinOp("*", BinOp("/", op.ref, s), s), expr_text(op.ref)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        new, _ = self._split(program, site, params)
        return replace_in_statement(program, site.path, tuple(site.get("operand")), new)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        new, x = self._split(before, site, params)
        s = str(params["s"])
        proof = positive_proof(before, choice_ref(before, site.path, s)) or []
        t = TraceBuilder()
        stmt = statement_at(before.body, site.path)
        changed = statement_at(after.body, site.path)
        why = "; ".join(f"{t.before(text)} ({reason})" for text, reason in proof)
        return t.build(
            applicability=(f"{t.before(canonical(stmt))} reads {t.before(x)} outside any product, and "
                           f"{t.before(s)} is an existing value proved non-zero: {why}."),
            change=(f"{x} becomes {t.after(expr_text(new))}, giving {t.after(canonical(changed))}; "
                    f"parameter s={s}."),
            rationale=(f"An enabling step: {x} is now a product with the factor {s}, so a later step can "
                       f"fold {x}/{s} into a normalised quantity and move the factor {s} (a running sum or "
                       "scale, as online softmax rescales its accumulator) elsewhere. On its own it adds a "
                       "division and a multiplication."),
            exactness=(f"Numerically equivalent (N): {x}/{s}*{s} equals {x} for {s} != 0 in real arithmetic; "
                       "floating point rounds the quotient and the product, and an exp that underflows to "
                       "0 would break the proof (the verifier's special values test it)."),
        )
