"""powsimp (catalogue #30): combine powers with a common base (``exp(a)*exp(b)`` → ``exp(a+b)``)."""

from __future__ import annotations

import sympy

from strategies.math.algebraic import AlgebraicRewrite
from strategies.math.sympy_bridge import Rewrite, SymExpr, Translation
from strategies.registry import register


@register
class Powsimp(AlgebraicRewrite):
    """Combine powers with a common base or exponent (``exp(a)*exp(b)`` → ``exp(a+b)``, ``x**a*x**b`` → ``x**(a+b)``).

    From level1/softmax after expand_powsimp:
    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a})*exp(-D^{f32,g}_{tx});];``
    After:  ``B^{16}_{tx=0}L^{256}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];``

    Precondition: a float statement whose expression has a product of powers of one base (exponentials
    included) that SymPy ``powsimp`` combines without assumptions (it leaves ``sqrt(a)*sqrt(b)``, which needs
    ``a, b ≥ 0``, alone).
    Numerically equivalent (N): x**a*x**b = x**(a+b); the rounding differs.
    """

    number = 30
    name = "powsimp"
    identity = "x**a*x**b = x**(a+b)"

    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        return sympy.powsimp(tr.sym)

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        return "It multiplies powers of one base (exponentials included) that combine"

    def rationale(self, rw: Rewrite, operand: str) -> str:
        return ("One transcendental call instead of several: exp is far dearer than an addition, so combining "
                "exponents cuts the expensive work (and can keep an exp from overflowing on its own).")
