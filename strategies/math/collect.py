"""collect (catalogue #34): collect the terms of a sum around one operand."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation, atom_operands, operand_node
from strategies.registry import register


@register
class Collect(AlgebraicRewrite):
    """Collect the terms of a sum that contain one operand (``A*C+A*D+E`` → ``A*(C+D)+E``).

    From level1/gelu after expand_collect:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*erf(A^{f32,g}_{tx,a}*0.7071067811865476)+0.5*A^{f32,g}_{tx,a};];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*(0.5*erf(A^{f32,g}_{tx,a}*0.7071067811865476)+0.5);];``

    Precondition: a float statement whose expression is a sum in which at least two terms contain the
    operand (a tensor read or an opaque call) to the same power; SymPy ``collect(expr, operand)`` groups
    them. Terms without the operand stay as they are.
    Numerically equivalent (N): distributivity around one operand; the rounding differs.
    """

    number = 34
    name = "collect"
    identity = "distributivity (x*a+x*b = x*(a+b))"

    def operands(self, tr: Translation) -> list[str]:
        return atom_operands(tr)

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        return sympy.collect(tr.sym, operand_node(tr, operand))

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "Several of its terms contain the same operand"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("The operand is multiplied once instead of once per term, and the collected coefficient "
                "is a sub-expression later strategies can split out or hoist.")
