"""cancellation (catalogue #26): cancel the common factors of a fraction."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation, freeze, thaw
from strategies.registry import register


@register
class Cancellation(AlgebraicRewrite):
    """Cancel the common factors of a fraction's numerator and denominator.

    From level1/tanh after expand_cancellation:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=(-2*exp(2*A^{f32,g}_{tx,a})-2)/((exp(2*A^{f32,g}_{tx,a})+1)*(exp(2*A^{f32,g}_{tx,a})+1))+1;];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=1-2/(exp(2*A^{f32,g}_{tx,a})+1);];``

    Precondition: a float statement whose expression is (or has a term that is) a fraction ``n/d`` whose
    numerator and denominator share a non-constant polynomial factor ``g`` (SymPy ``gcd``), and ``g`` is
    provably positive (so dividing by it was never a division by zero); SymPy ``cancel`` removes it.
    Numerically equivalent (N): n*g/(d*g) = n/d for g ≠ 0; the rounding differs.
    """

    number = 26
    name = "cancellation"
    identity = "n*g/(d*g) = n/d for g ≠ 0"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        frozen, table = freeze(tr.sym)
        terms = []
        changed = False
        for term in sympy.Add.make_args(frozen):
            n, d = sympy.fraction(term)
            if not d.is_Number and not sympy.gcd(n, d).is_Number:
                term = sympy.factor_terms(sympy.cancel(term))
                changed = True
            terms.append(term)
        return thaw(sympy.Add(*terms), table) if changed else None

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "A fraction in it has a numerator and a denominator with a common non-constant factor"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("Cancelling the common factor removes the operations that computed it twice and the "
                "division's rounding of it, leaving a smaller fraction.")
