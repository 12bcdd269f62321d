"""expand_collect (catalogue #35): distribute one operand over the sum it multiplies (the inverse of collect)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation, atom_operands, operand_node
from strategies.registry import register


@register
class ExpandCollect(AlgebraicRewrite):
    """Distribute one operand over the sum it multiplies (``A*(C+D)+E`` → ``A*C+A*D+E``).

    From level1/gelu:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*(1+erf(A^{f32,g}_{tx,a}*0.7071067811865476));];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=0.5*A^{f32,g}_{tx,a}*erf(A^{f32,g}_{tx,a}*0.7071067811865476)+0.5*A^{f32,g}_{tx,a};];``

    Precondition: a float statement whose expression has a term that is the operand (a tensor read or an
    opaque call) times a sum — a collected form that exists in the state; only that product is
    distributed (SymPy ``expand_mul`` on the terms containing the operand), other products stay.
    Numerically equivalent (N): distributivity around one operand; the rounding differs.
    """

    number = 35
    name = "expand_collect"
    identity = "distributivity (x*(a+b) = x*a+x*b)"

    def operands(self, tr: Translation) -> list[str]:
        return atom_operands(tr)

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        x = operand_node(tr, operand)
        terms = []
        for term in sympy.Add.make_args(tr.sym):
            factors = sympy.Mul.make_args(term)
            if x in factors and any(f.is_Add for f in factors):
                term = sympy.expand_mul(term)
            terms.append(term)
        return sympy.Add(*terms)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "A term of it is the operand times a sum"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("Distributing the operand gives independent products, each of which can be fused into a "
                "multiply-add or reordered; it costs one multiplication per extra term.")
