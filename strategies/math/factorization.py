"""factorization (catalogue #24): pull common factors out of a sum, or factor a polynomial."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation, divisors, freeze, thaw
from strategies.registry import register


@register
class Factorization(AlgebraicRewrite):
    """Factor a statement's expression: common factors out of a sum, or a polynomial into its factors.

    From level1/gelu_tanh:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*(1+(1-2/(exp(2*(0.7978845608028654*(A^{f32,g}_{tx,a}+0.044715*(A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a}))))+1)));];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*(1-1/(exp(A^{f32,g}_{tx,a}*(0.07135481627260025*(A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a})+1.5957691216057308))+1));];``

    Precondition: a float statement whose expression (the accumulation prefix kept outside) is a sum
    with a common non-trivial factor (SymPy ``factor_terms``, e.g. ``A*C+A*D`` → ``A*(C+D)``) or, if it has
    no divisor, a polynomial in its operands that SymPy ``factor`` splits (``A*A-C*C`` → ``(A-C)*(A+C)``).
    The exponential split ``exp(A-D)`` → ``exp(A)*exp(-D)`` is the power rule ``x**(a+b)=x**a*x**b`` and
    is ``expand_powsimp`` (#31), not repeated here.
    Numerically equivalent (N): distributivity read backwards; the rounding differs.
    """

    number = 24
    name = "factorization"
    identity = "distributivity (a*b+a*c = a*(b+c))"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        out = sympy.factor_terms(tr.sym)
        if out == tr.sym and not divisors(tr.sym):
            frozen, table = freeze(tr.sym)
            out = thaw(sympy.factor(frozen), table)
        return out

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "Its terms share a factor SymPy can pull out (or it is a polynomial that factors)"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("A common factor computed once instead of once per term saves multiplications; the factored "
                "form is also what later strategies (cancellation, collect) start from.")
