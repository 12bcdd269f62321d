"""logsimp (catalogue #33): combine a sum of logs into the log of a product (``log(a)+log(b)`` → ``log(a*b)``)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation
from strategies.registry import register


@register
class Logsimp(AlgebraicRewrite):
    """Combine logarithms (``log(a)+log(b)`` → ``log(a*b)``, ``n*log(a)`` → ``log(a**n)``, ``-log(a)`` → ``log(1/a)``).

    From level1/log_sigmoid_terms after compute_inline, expand_log:
    Before: ``B^{4}_{tx=0}L^{32}_{a=0}[E^{f32,g}_{tx,a}=-log(1+exp(-A^{f32,g}_{tx,a}));];``
    After:  ``B^{4}_{tx=0}L^{32}_{a=0}[E^{f32,g}_{tx,a}=log(1/(1+exp(-A^{f32,g}_{tx,a})));];``

    Precondition: a float statement with a sum of logarithms (or a multiple of one) whose arguments are all
    provably positive; SymPy ``logcombine(force=True)`` combines them once the signs are proved (for
    negative arguments ``log(a)+log(b)`` is NaN but ``log(a*b)`` is not, so unproved sites are refused).
    Numerically equivalent (N): log(a)+log(b) = log(a*b) for a, b > 0; the rounding differs.
    """

    number = 33
    name = "logsimp"
    identity = "log(a)+log(b) = log(a*b) for a, b > 0"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        def fold(term: SymExpr) -> SymExpr:
            coeff, rest = term.as_coeff_Mul()
            if isinstance(rest, sympy.log) and coeff.is_Rational and coeff != 1:
                return sympy.log(rest.args[0] ** coeff)
            return term

        folded = sympy.Add(*[fold(term) for term in sympy.Add.make_args(tr.sym)])
        return sympy.logcombine(folded, force=True)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It adds (or scales) logarithms of provably positive values"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("One logarithm instead of several: log is a transcendental call, far dearer than the "
                "multiplication that replaces the extra ones.")
