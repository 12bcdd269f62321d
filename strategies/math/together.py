"""together (catalogue #29): combine the fractions of a sum over one denominator."""

from __future__ import annotations

import sympy

from leir.ast import BinOp, Expr, walk_expr
from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation, divisors
from strategies.registry import register


@register
class Together(AlgebraicRewrite):
    """Combine the terms of a sum over one common denominator.

    From level1/sigmoid:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=1/(1+exp(-A^{f32,g}_{tx,a}));];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a})/(exp(A^{f32,g}_{tx,a})+1);];``

    Precondition: a float statement whose expression is a sum with at least one fraction whose
    denominator is not a literal; SymPy ``together`` writes it as one fraction (``a+b/c`` → ``(a*c+b)/c``).
    The new denominator is the product of the old ones, so no new divisor appears.
    Numerically equivalent (N): a/b + c/d = (a*d+b*c)/(b*d); the rounding differs.
    """

    number = 29
    name = "together"
    identity = "a/b + c/d = (a*d+b*c)/(b*d)"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        if not divisors(tr.sym):
            return None  # only literal denominators: nothing to put over one
        return sympy.together(tr.sym)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It is a sum with a fraction whose denominator is not a literal"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        """Counts the divisions on both sides: the sentence never claims a saving the rewrite lacks."""
        before, after = _divisions(rw.region.expr), _divisions(rw.new_expr)
        if after < before:
            return (f"{_count(after)} instead of {_count(before)}: divisions are the slowest arithmetic on "
                    "both CPU and GPU, so the combined form trades them for multiplications.")
        counts = (f"{_count(before)} before and after" if after == before else
                  f"{_count(before)} before and {_count(after)} after")
        return (f"{counts}: combining over one denominator saves no division here, so the step is worth "
                "taking only as the input to a later rewrite (a cancellation or factorization of the "
                "combined numerator).")


def _divisions(expr: Expr) -> int:
    return sum(1 for node in walk_expr(expr) if isinstance(node, BinOp) and node.op == "/")


def _count(n: int) -> str:
    return f"{n} division{'' if n == 1 else 's'}"
