"""apart (catalogue #28): partial-fraction decomposition in one operand."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import (
    Rewrite,
    SymExpr,
    Translation,
    denominator_operands,
    freeze,
    operand_node,
    thaw,
)
from strategies.registry import register


@register
class Apart(AlgebraicRewrite):
    """Decompose a fraction into partial fractions (polynomial part plus proper fractions) in one operand.

    From level1/gelu_tanh:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*(1+(1-2/(exp(2*(0.7978845608028654*(A^{f32,g}_{tx,a}+0.044715*(A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a}))))+1)));];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}-A^{f32,g}_{tx,a}/(exp(0.07135481627260025*(A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a})+1.5957691216057308*A^{f32,g}_{tx,a})+1);];``

    Precondition: a float statement whose expression is a rational function of an operand ``t`` (a tensor
    read, or an ``exp(…)`` that occurs in a denominator) whose denominator depends on ``t``; SymPy
    ``apart(expr, t)`` splits it into a polynomial part and proper fractions (``(t-1)/(t+1)`` →
    ``1-2/(t+1)``). The denominators stay factors of the original one.
    Numerically equivalent (N): partial-fraction decomposition; the rounding differs.
    """

    number = 28
    name = "apart"
    identity = "partial-fraction decomposition"

    def operands(self, tr: Translation) -> list[str]:
        return denominator_operands(tr)

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        node = operand_node(tr, operand)
        frozen, table = freeze(tr.sym)
        t = next((d for d, original in table.items() if original == node), node)
        if not frozen.has(t):
            return None
        n, d = sympy.fraction(sympy.together(frozen))
        if not d.has(t):
            return None
        return thaw(sympy.apart(frozen, t), table)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It is a rational function whose denominator depends on the operand"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("Partial fractions split a quotient into a polynomial part and simpler fractions; each piece "
                "can then be fused, hoisted or simplified on its own.")


