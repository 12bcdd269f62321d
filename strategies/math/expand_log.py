"""expand_log (catalogue #32): split the log of a product (``log(a*b)`` → ``log(a)+log(b)``)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation
from strategies.registry import register


@register
class ExpandLog(AlgebraicRewrite):
    """Split the logarithm of a product or power (``log(a*b)`` → ``log(a)+log(b)``, ``log(a**n)`` → ``n*log(a)``).

    From level1/log_sigmoid_terms after compute_inline:
    Before: ``B^{4}_{tx=0}L^{32}_{a=0}[E^{f32,g}_{tx,a}=log(1/(1+exp(-A^{f32,g}_{tx,a})));];``
    After:  ``B^{4}_{tx=0}L^{32}_{a=0}[E^{f32,g}_{tx,a}=-log(1+exp(-A^{f32,g}_{tx,a}));];``

    Precondition: a float statement with ``log`` of a product, quotient or power whose every factor is
    provably positive (``exp(…)``, a positive literal, squares or ``sqrt`` plus a positive literal …);
    with an unprovable factor the identity fails for negative factors and the site is refused. SymPy
    ``expand_log(force=True)`` does the split once the signs are proved.
    Numerically equivalent (N): log(a*b) = log(a)+log(b) for a, b > 0; the rounding differs.
    """

    number = 32
    name = "expand_log"
    identity = "log(a*b) = log(a)+log(b) for a, b > 0"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        return sympy.expand_log(tr.sym, force=True)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It takes the logarithm of a product (or power) of provably positive factors"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("Split logarithms keep a product from overflowing before the log is taken, and expose each "
                "factor's log (log(exp(x)) is x) to later simplification.")
