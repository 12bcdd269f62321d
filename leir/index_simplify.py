"""Floor division and modulo of index expressions, simplified under loop ranges.

A layout map or a split writes ``(x*16+g)//16`` and ``(x*16+g)%16`` where ``g`` runs over ``[0, 16)``:
the element is ``x`` and ``g``, which is what TVM's simplifier makes of it when it builds the program.
Analyses that read strides off subscripts (``leir.analysis.stride_along``, the tuner's cost model) see
only affine forms, so they call ``simplify_index`` first. The rule is the canonical one: write the
dividend as ``f*q + r`` — the terms whose coefficient ``f`` divides go to ``q``, the rest to ``r`` — and
when the loop ranges keep ``r`` in ``[0, f)``, ``//f`` is ``q`` and ``%f`` is ``r``. Anything else is left
as written (never wrong, only less simple).
"""

from __future__ import annotations

from leir.ast import BinOp, Expr, Neg, Num, Paren
from leir.builders import iadd, imul, lit
from leir.intervals import Ranges, index_range

#: (coefficient, term) pairs and a constant: a sum the rule can divide term by term.
_Terms = tuple[list[tuple[int, Expr]], int]


def simplify_index(expr: Expr, ranges: Ranges) -> Expr:
    """``expr`` with every ``(f*q + r)//f`` made ``q`` and ``(f*q + r)%f`` made ``r`` where ``ranges``
    (``{var: (lo, hi)}``, e.g. ``leir.analysis.loop_ranges``) keep ``r`` in ``[0, f)``."""
    if isinstance(expr, Paren):
        inner = simplify_index(expr.inner, ranges)
        return expr if inner is expr.inner else Paren(inner)
    if isinstance(expr, Neg):
        operand = simplify_index(expr.operand, ranges)
        return expr if operand is expr.operand else Neg(operand)
    if not isinstance(expr, BinOp):
        return expr
    left, right = simplify_index(expr.left, ranges), simplify_index(expr.right, ranges)
    divisor = _positive_int(right)
    if expr.op in ("//", "%") and divisor is not None:
        parts = _divided(left, divisor, ranges)
        if parts is not None:
            return parts[0] if expr.op == "//" else parts[1]
    if left is expr.left and right is expr.right:
        return expr
    return BinOp(expr.op, left, right)


def _positive_int(expr: Expr) -> int | None:
    if isinstance(expr, Paren):
        return _positive_int(expr.inner)
    if isinstance(expr, Num) and expr.is_int and int(expr.text) > 0:
        return int(expr.text)
    return None


def _divided(expr: Expr, divisor: int, ranges: Ranges) -> tuple[Expr, Expr] | None:
    """(quotient, remainder) of ``expr`` by ``divisor`` when the remainder part provably lies in
    ``[0, divisor)``, else ``None``."""
    terms = _terms(expr)
    if terms is None:
        return None
    pairs, const = terms
    quotient: Expr = lit(0)
    remainder: Expr = lit(0)
    for coeff, term in pairs:
        if coeff % divisor == 0:
            quotient = iadd(quotient, imul(term, coeff // divisor))
        else:
            remainder = iadd(remainder, imul(term, coeff))
    quotient, remainder = iadd(quotient, const // divisor), iadd(remainder, const % divisor)
    bounds = index_range(remainder, ranges)
    if bounds is None or bounds[0] < 0 or bounds[1] >= divisor:
        return None
    return quotient, remainder


def _terms(expr: Expr) -> _Terms | None:
    """``expr`` as integer-weighted terms plus a constant (a product with a literal scales its term;
    anything else — a variable, ``i%59``, a product of variables — is one term of weight 1)."""
    if isinstance(expr, Paren):
        return _terms(expr.inner)
    if isinstance(expr, Num):
        return ([], int(expr.text)) if expr.is_int else None
    if isinstance(expr, Neg):
        inner = _terms(expr.operand)
        return None if inner is None else ([(-c, t) for c, t in inner[0]], -inner[1])
    if isinstance(expr, BinOp) and expr.op in ("+", "-"):
        left, right = _terms(expr.left), _terms(expr.right)
        if left is None or right is None:
            return None
        sign = 1 if expr.op == "+" else -1
        return left[0] + [(sign * c, t) for c, t in right[0]], left[1] + sign * right[1]
    if isinstance(expr, BinOp) and expr.op == "*":
        for scale, term in ((expr.right, expr.left), (expr.left, expr.right)):
            factor = _positive_int(scale) if not isinstance(scale, Neg) else None
            if factor is not None:
                inner = _terms(term)
                return None if inner is None else ([(c * factor, t) for c, t in inner[0]], inner[1] * factor)
    return [(1, expr)], 0
