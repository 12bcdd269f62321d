"""Which type a comparison computes in: LEIR's one promotion rule.

A statement's arithmetic runs in its left-hand side's dtype, but a comparison inside an
``if_then_else`` condition compares its two operands in their *promoted* type: a float if either is a
float, the wider of two floats (``f16`` with ``bf16`` gives ``f32``, ``f8e4m3`` with ``f8e5m2`` gives
``f16``; an fp8 type with any wider float gives the wider one, which holds every fp8 value), NumPy's rule
for two integers (``bool`` counts as ``i64``). Untyped literals (``2``, ``0.5``, ``inf``) are *weak*: they
adopt the other operand's type. The interpreter evaluates by this rule, the checker range-checks literals
by it and the TVM lowering emits by it, so it lives here once.
"""

from __future__ import annotations

import numpy as np

from leir.ast import BinOp, Call, Expr, IfThenElse, Inf, Neg, Num, Paren, TensorRef, Var
from leir.dtypes import from_numpy_dtype, is_bool, is_float, numpy_dtype

__all__ = ["WEAK_FLOAT", "WEAK_INT", "concrete", "natural_type", "promote"]

#: The type of an untyped integer literal, which adopts the other operand's type.
WEAK_INT = "~int"
#: The type of an untyped float literal (or ``inf``): adopts a float operand's type, else is ``f64``.
WEAK_FLOAT = "~float"

_FLOAT_ORDER = {"f8e4m3": -2, "f8e5m2": -1, "f16": 0, "bf16": 1, "f32": 2, "f64": 3}
#: Pairs of floats neither of which holds the other, and the narrowest type holding both.
_JOINT = {frozenset({"f16", "bf16"}): "f32", frozenset({"f8e4m3", "f8e5m2"}): "f16"}


def promote(a: str, b: str) -> str:
    """The type two operands of types ``a`` and ``b`` are compared in (weak types included)."""
    if a == b:
        return a
    if a == WEAK_INT:
        return b
    if b == WEAK_INT:
        return a
    if a == WEAK_FLOAT:
        return b if is_float(b) else "f64"
    if b == WEAK_FLOAT:
        return a if is_float(a) else "f64"
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        joint = _JOINT.get(frozenset({a, b}))
        if joint is not None:
            return joint
        return a if _FLOAT_ORDER[a] > _FLOAT_ORDER[b] else b
    if fa:
        return a
    if fb:
        return b
    a2 = "i64" if is_bool(a) else a
    b2 = "i64" if is_bool(b) else b
    if a2 == b2:
        return a2
    res = np.result_type(numpy_dtype(a2), numpy_dtype(b2))
    if res.kind == "f":
        return "f64"
    return from_numpy_dtype(res)


def natural_type(expr: Expr) -> str:
    """The type an expression has on its own, before any statement converts it (a comparison operand)."""
    kind = type(expr)
    if kind is TensorRef:
        return expr.dtype
    if kind is Var:
        return "i64"
    if kind is Num:
        return WEAK_INT if expr.is_int else WEAK_FLOAT
    if kind is Inf:
        return WEAK_FLOAT
    if kind is Paren:
        return natural_type(expr.inner)
    if kind is Neg:
        return natural_type(expr.operand)
    if kind is BinOp:
        return promote(natural_type(expr.left), natural_type(expr.right))
    if kind is Call:
        if expr.func in ("max", "min"):
            return promote(natural_type(expr.args[0]), natural_type(expr.args[1]))
        inner = natural_type(expr.args[0])
        if expr.func == "abs":
            return inner
        return inner if is_float(inner) or inner == WEAK_FLOAT else "f64"
    if kind is IfThenElse:
        return promote(natural_type(expr.then), natural_type(expr.otherwise))
    return "f64"


def concrete(t: str) -> str:
    """A weak type made concrete (``~int`` → ``i64``, ``~float`` → ``f64``); a dtype stays itself."""
    return "i64" if t == WEAK_INT else ("f64" if t == WEAK_FLOAT else t)
