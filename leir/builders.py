"""Small constructors for LEIR expressions, with the index arithmetic simplified as the public data spells it.

The frontend's emitters and the strategies build their statements with these instead of raw
``leir.ast`` nodes, so index expressions come out as ``c*2+f`` rather than ``c*2+f*1+0`` and literals
are spelled exactly (``1e-05``, ``0.5``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from leir.ast import BinOp, Call, Compare, Cond, Expr, IfThenElse, Inf, Logical, Neg, Num, Var
from leir.errors import LeirError


class NoNanLiteralError(LeirError, ValueError):
    """A NaN constant was asked for: LEIR has no way to spell it."""


#: What the builders accept as an operand: an expression, or a Python number spelled as a literal.
Operand = Expr | int | float | bool

ZERO = Num("0")
ONE = Num("1")


def lit(value: float | int | bool) -> Expr:
    """A literal for a Python number; floats keep Python's shortest round-trip spelling."""
    if isinstance(value, bool):
        return ONE if value else ZERO
    if isinstance(value, int):
        return Num(str(value)) if value >= 0 else Neg(Num(str(-value)))
    value = float(value)
    if math.isnan(value):
        raise NoNanLiteralError("LEIR has no NaN literal")
    if math.isinf(value):
        return Inf() if value > 0 else Neg(Inf())
    if value.is_integer() and abs(value) < 1e15:
        return lit(int(value))
    text = repr(abs(value))
    return Num(text) if value >= 0 else Neg(Num(text))


def as_expr(value: Operand) -> Expr:
    return lit(value) if isinstance(value, int | float | bool) else value


def var(name: str) -> Var:
    return Var(name)


# ------------------------------------------------------------------------------------------ index maths


def _int_of(e: Expr) -> int | None:
    if isinstance(e, Num) and e.is_int:
        return int(e.text)
    if isinstance(e, Neg) and isinstance(e.operand, Num) and e.operand.is_int:
        return -int(e.operand.text)
    return None


def iadd(a: Operand, b: Operand) -> Expr:
    """``a + b`` for index expressions, dropping zeros and folding constants."""
    a, b = as_expr(a), as_expr(b)
    ka, kb = _int_of(a), _int_of(b)
    if ka is not None and kb is not None:
        return lit(ka + kb)
    if kb == 0:
        return a
    if ka == 0:
        return b
    if kb is not None and kb < 0:
        return BinOp("-", a, lit(-kb))
    return BinOp("+", a, b)


def isub(a: Operand, b: Operand) -> Expr:
    b = as_expr(b)
    kb = _int_of(b)
    if kb is not None:
        return iadd(a, -kb)
    return BinOp("-", as_expr(a), b)


def imul(a: Operand, k: Operand) -> Expr:
    a, k = as_expr(a), as_expr(k)
    ka, kk = _int_of(a), _int_of(k)
    if ka is not None and kk is not None:
        return lit(ka * kk)
    if kk == 1:
        return a
    if ka == 1:
        return k
    if kk == 0 or ka == 0:
        return ZERO
    return BinOp("*", a, k)


def ifloordiv(a: Operand, k: int) -> Expr:
    a = as_expr(a)
    ka = _int_of(a)
    if ka is not None:
        return lit(ka // k)
    return a if k == 1 else BinOp("//", a, lit(k))


def imod(a: Operand, k: int) -> Expr:
    a = as_expr(a)
    ka = _int_of(a)
    if ka is not None:
        return lit(ka % k)
    return ZERO if k == 1 else BinOp("%", a, lit(k))


def isum(terms: Iterable[Operand]) -> Expr:
    out: Expr = ZERO
    for t in terms:
        out = iadd(out, t)
    return out


# ------------------------------------------------------------------------------------------ value maths


def add(a: Operand, b: Operand) -> Expr:
    return BinOp("+", as_expr(a), as_expr(b))


def sub(a: Operand, b: Operand) -> Expr:
    return BinOp("-", as_expr(a), as_expr(b))


def mul(a: Operand, b: Operand) -> Expr:
    return BinOp("*", as_expr(a), as_expr(b))


def div(a: Operand, b: Operand) -> Expr:
    return BinOp("/", as_expr(a), as_expr(b))


def pow_(a: Operand, b: Operand) -> Expr:
    return BinOp("**", as_expr(a), as_expr(b))


def neg(a: Operand) -> Expr:
    return Neg(as_expr(a))


def call(func: str, *args: Operand) -> Expr:
    return Call(func, tuple(as_expr(a) for a in args))


def exp(a: Operand) -> Expr:
    return call("exp", a)


def log(a: Operand) -> Expr:
    return call("log", a)


def sqrt(a: Operand) -> Expr:
    return call("sqrt", a)


def maximum(a: Operand, b: Operand) -> Expr:
    return call("max", a, b)


def minimum(a: Operand, b: Operand) -> Expr:
    return call("min", a, b)


def ite(cond: Cond, then: Operand, otherwise: Operand) -> Expr:
    return IfThenElse(cond, as_expr(then), as_expr(otherwise))


def cmp(a: Operand, op: str, b: Operand) -> Compare:
    return Compare((as_expr(a), as_expr(b)), (op,))


def chain(lo: Operand, op1: str, mid: Operand, op2: str, hi: Operand) -> Compare:
    """``lo op1 mid op2 hi`` as one chained comparison (``2<=c<258``)."""
    return Compare((as_expr(lo), as_expr(mid), as_expr(hi)), (op1, op2))


def land(a: Cond | None, b: Cond | None) -> Cond | None:
    if a is None:
        return b
    if b is None:
        return a
    return logical("&", a, b)


def lor(a: Cond, b: Cond) -> Cond:
    return logical("|", a, b)


def logical(op: str, a: Cond, b: Cond) -> Cond:
    """``a op b`` shaped so that its text reads back as the same condition.

    LEIR's ``&`` and ``|`` share one precedence level, left-associative, and a condition has no
    parentheses: ``Logical("|", x, Logical("&", y, z))`` would print ``x|y&z``, which reads back as
    ``(x|y)&z``. A logical right operand is therefore moved left — re-associated under the same operator,
    swapped with a plain left operand under the other (both are commutative and side-effect free).
    """
    if not isinstance(b, Logical):
        return Logical(op, a, b)
    if b.op == op:
        return logical(op, logical(op, a, b.left), b.right)
    if not isinstance(a, Logical):
        return Logical(op, b, a)
    raise LeirError(f"({a}) {op} ({b}) has no spelling in LEIR conditions (no parentheses); "
                    "build it as a sum of if_then_else terms instead")


def sigmoid(a: Operand) -> Expr:
    """``1/(1+exp(-a))``: saturates to 0 and 1 without NaN."""
    return div(1, add(1, exp(neg(a))))


def tanh(a: Operand) -> Expr:
    """``1-2/(exp(2a)+1)``: unlike the ratio of exponentials it never turns into inf/inf."""
    return sub(1, div(2, add(exp(mul(2, a)), 1)))
