"""expand_powsimp (catalogue #31): split a power of a sum into a product of powers (``exp(A-D)`` → ``exp(A)*exp(-D)``)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation
from strategies.registry import register


@register
class ExpandPowsimp(AlgebraicRewrite):
    """Split a power whose exponent is a sum into a product of powers (``exp(A-D)`` → ``exp(A)*exp(-D)``).

    From level1/softmax:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a})*exp(-D^{f32,g}_{tx});];``

    Precondition: a float statement whose expression has an exponential (or a power) whose exponent is a
    sum: SymPy ``expand_power_exp`` splits it (the inverse of ``powsimp``; ``(x*y)**a`` is not split, that
    needs assumptions). Splitting ``exp(A-D)`` can overflow where the original did not (``exp(A)`` of a
    large ``A``); the verifier's large-magnitude inputs reject such steps.
    Numerically equivalent (N): x**(a+b) = x**a*x**b; the rounding differs.
    """

    number = 31
    name = "expand_powsimp"
    identity = "x**(a+b) = x**a*x**b"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        return sympy.expand_power_exp(tr.sym)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It has a power (an exponential) whose exponent is a sum"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("An enabling step: with the exponent split, a factor that depends on fewer loops (such as "
                "exp(-D) of a row statistic) can be hoisted or cached separately, as online softmax does.")
