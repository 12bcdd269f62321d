"""expand_cancellation (catalogue #27): multiply a fraction's numerator and denominator by a factor of its denominator (the inverse of cancellation)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import (
    Prover,
    Rewrite,
    SymExpr,
    Translation,
    leir_text,
    reread,
    same_form,
)
from strategies.registry import register


@register
class ExpandCancellation(AlgebraicRewrite):
    """Un-cancel a fraction: multiply numerator and denominator by a provably positive factor of its denominator.

    From level1/silu:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}/(1+exp(-A^{f32,g}_{tx,a}));];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=(A^{f32,g}_{tx,a}+A^{f32,g}_{tx,a}*exp(-A^{f32,g}_{tx,a}))/((1+exp(-A^{f32,g}_{tx,a}))*(1+exp(-A^{f32,g}_{tx,a})));];``

    Precondition: a float statement whose expression is (or has a term that is) a fraction ``n/d`` with a
    non-constant factor ``g`` of ``d`` (the operand) that is provably positive; ``n/d`` becomes
    ``expand(n*g)/(d*g)`` — the numerator expanded, so that SymPy does not cancel it back on reading,
    and ``cancellation`` (#26) restores the original.
    Numerically equivalent (N): n/d = n*g/(d*g) for g ≠ 0; the rounding differs.
    """

    number = 27
    name = "expand_cancellation"
    identity = "n/d = n*g/(d*g) for g ≠ 0"

    def operands(self, tr: Translation) -> list[str]:
        prover, found = Prover(tr), []
        for term in sympy.Add.make_args(tr.sym):
            _, d = sympy.fraction(term)
            for g in sympy.Mul.make_args(d):
                if not g.is_Number and prover.positive(g) is not None:
                    text = _text(g, tr)
                    if text and text not in found:
                        found.append(text)
        return found

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        terms, changed = [], False
        for term in sympy.Add.make_args(tr.sym):
            n, d = sympy.fraction(term)
            factors = [g for g in sympy.Mul.make_args(d) if _text(g, tr) == operand]
            if factors:
                g = factors[0]
                numer = sympy.expand_mul(n * g)
                term = sympy.Mul(numer, sympy.Pow(d * g, -1, evaluate=False), evaluate=False)
                changed = True
            terms.append(term)
        if not changed:
            return None
        out = sympy.Add(*terms, evaluate=False) if len(terms) > 1 else terms[0]
        # SymPy cancels a monomial numerator back on reading (A*g/(g*g) is A/g): such a form is no
        # real un-cancelled fraction, and cancellation could never see it, so it is no site
        again = reread(out, tr)
        return None if again is None or same_form(again, tr.sym) else out

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "A fraction in it has a provably positive denominator factor to multiply through by"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("An enabling step: with numerator and denominator over the same extra factor, the fraction "
                "can be combined with others (together) or split differently; it costs operations itself.")


def _text(g: SymExpr, tr: Translation) -> str:
    try:
        return leir_text(g, tr)
    except ValueError:
        return ""
