"""expand_factorization (catalogue #25): distribute products over sums (the inverse of factorization)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation
from strategies.registry import register


@register
class ExpandFactorization(AlgebraicRewrite):
    """Expand a factored expression: distribute products (and small integer powers) over sums.

    From level1/gelu:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*(1+erf(A^{f32,g}_{tx,a}*0.7071067811865476));];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*erf(A^{f32,g}_{tx,a}*0.7071067811865476)+0.5*A^{f32,g}_{tx,a};];``

    Precondition: a float statement whose expression contains a product with a sum factor, or an integer
    power of a sum (a factored expression that exists in the state); SymPy ``expand`` with only the
    ``mul`` and ``multinomial`` hints (no exponential, log or power-base expansion) distributes it.
    Numerically equivalent (N): distributivity; the rounding differs.
    """

    number = 25
    name = "expand_factorization"
    identity = "distributivity (a*(b+c) = a*b+a*c)"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        return sympy.expand(tr.sym, deep=True, mul=True, multinomial=True, power_exp=False,
                            power_base=False, log=False, basic=True)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It contains a product with a sum factor (or a power of a sum) that distributes"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("The expanded form is a flat sum of products, which exposes each term to term-level "
                "strategies (collect, expression splitting, fused multiply-adds); it may cost operations.")
