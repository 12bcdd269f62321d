"""Value ranges of LEIR index expressions over loop ranges.

The checker must prove every tensor access in bounds "for any loop value" and infer intermediate shapes
as 1 + the largest index. Plain interval arithmetic over-approximates as soon as a variable appears twice
(``tx*4+a-tx*4``), so an index is first put in *linear form*: an exact integer coefficient per loop
variable plus an interval for everything that is not linear (``i//4``, ``i%4``, products of variables).
Each variable then contributes its exact extreme once, which is tight for every affine index and never
unsound for the rest.

``refine`` narrows loop ranges under a condition (``2<=c<258`` → ``c`` in [2, 257]; the else branch of
``a-1<0`` → ``a >= 1``), which is what makes guarded reads such as padding and prefix recurrences provably
in bounds. Anything that is not a comparison of one variable's linear expression with constants is left
alone (sound: no refinement).
"""

from __future__ import annotations

from collections.abc import Mapping

from leir.ast import BinOp, Compare, Logical, Neg, Num, Paren, Var, strip_parens

Range = tuple[int, int]
Ranges = Mapping[str, Range]

__all__ = ["Linear", "linear", "index_range", "exact_range", "NEVER", "refine", "Range", "Ranges"]


class Linear:
    """``sum(coeffs[v] * v) + [lo, hi]``: exact in the variables, an interval for the rest."""

    __slots__ = ("coeffs", "lo", "hi")

    def __init__(self, coeffs: dict[str, int], lo: int, hi: int) -> None:
        self.coeffs = coeffs
        self.lo = lo
        self.hi = hi

    @property
    def is_const(self) -> bool:
        return not self.coeffs and self.lo == self.hi

    def range(self, ranges: Ranges) -> Range | None:
        """The exact extremes of the linear part plus the interval part; ``None`` if a variable is unbound."""
        lo, hi = self.lo, self.hi
        for var, k in self.coeffs.items():
            r = ranges.get(var)
            if r is None:
                return None
            if k >= 0:
                lo += k * r[0]
                hi += k * r[1]
            else:
                lo += k * r[1]
                hi += k * r[0]
        return lo, hi


def _add(a: Linear, b: Linear, sign: int) -> Linear:
    coeffs = dict(a.coeffs)
    for var, k in b.coeffs.items():
        new = coeffs.get(var, 0) + sign * k
        if new:
            coeffs[var] = new
        else:
            coeffs.pop(var, None)
    if sign > 0:
        return Linear(coeffs, a.lo + b.lo, a.hi + b.hi)
    return Linear(coeffs, a.lo - b.hi, a.hi - b.lo)


def _scale(a: Linear, k: int) -> Linear:
    if k == 0:
        return Linear({}, 0, 0)
    coeffs = {v: c * k for v, c in a.coeffs.items()}
    lo, hi = a.lo * k, a.hi * k
    return Linear(coeffs, min(lo, hi), max(lo, hi))


def _floordiv(lo: int, hi: int, dlo: int, dhi: int) -> Range | None:
    if dlo <= 0 <= dhi:
        return None
    cands = [lo // dlo, lo // dhi, hi // dlo, hi // dhi]
    return min(cands), max(cands)


def _mod(lo: int, hi: int, dlo: int, dhi: int) -> Range | None:
    if dlo <= 0 <= dhi:
        return None
    if dlo == dhi:
        k = dlo
        if k > 0 and lo >= 0 and hi < k:
            return lo, hi
        if k > 0 and lo // k == hi // k:  # one period: floor mod is a shift
            return lo - (lo // k) * k, hi - (hi // k) * k
        return (0, k - 1) if k > 0 else (k + 1, 0)
    if dlo > 0:
        return 0, dhi - 1
    return dlo + 1, 0


def linear(expr, ranges: Ranges) -> Linear | None:
    """The linear form of an integer index expression, or ``None`` when it cannot be bounded.

    Unbounded means: a gather (tensor value), an unknown variable, a non-integer literal, ``/`` or
    ``**``, a call, or a division/modulo by something that may be zero.
    """
    if isinstance(expr, Var):
        return Linear({expr.name: 1}, 0, 0) if expr.name in ranges else None
    if isinstance(expr, Num):
        if not expr.is_int or len(expr.text) > 18:  # huge literals are the checker's literal-out-of-range
            return None
        v = int(expr.text)
        return Linear({}, v, v)
    if isinstance(expr, Paren):
        return linear(expr.inner, ranges)
    if isinstance(expr, Neg):
        inner = linear(expr.operand, ranges)
        return None if inner is None else _scale(inner, -1)
    if isinstance(expr, BinOp):
        left = linear(expr.left, ranges)
        if left is None:
            return None
        right = linear(expr.right, ranges)
        if right is None:
            return None
        op = expr.op
        if op == "+":
            return _add(left, right, 1)
        if op == "-":
            return _add(left, right, -1)
        if op == "*":
            if right.is_const:
                return _scale(left, right.lo)
            if left.is_const:
                return _scale(right, left.lo)
            lr, rr = left.range(ranges), right.range(ranges)
            if lr is None or rr is None:
                return None
            cands = [lr[0] * rr[0], lr[0] * rr[1], lr[1] * rr[0], lr[1] * rr[1]]
            return Linear({}, min(cands), max(cands))
        if op in ("//", "%"):
            lr, rr = left.range(ranges), right.range(ranges)
            if lr is None or rr is None:
                return None
            res = _floordiv(*lr, *rr) if op == "//" else _mod(*lr, *rr)
            return None if res is None else Linear({}, res[0], res[1])
        return None
    return None


def index_range(expr, ranges: Ranges) -> Range | None:
    """Smallest and largest value of an integer index over ``ranges``; ``None`` if unbounded."""
    lin = linear(expr, ranges)
    return None if lin is None else lin.range(ranges)


# ------------------------------------------------------------------------------------------ refinement

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _bound_pair(left, op: str, right, ranges: Ranges, out: dict[str, Range]) -> None:
    """Narrow ``out`` with ``left op right`` when it is ``k*v + c op 0`` for one variable ``v``."""
    if op == "!=":
        return
    lin_l = linear(left, ranges)
    if lin_l is None:
        return
    lin_r = linear(right, ranges)
    if lin_r is None:
        return
    diff = _add(lin_l, lin_r, -1)
    if len(diff.coeffs) != 1 or diff.lo != diff.hi:
        return
    ((var, k),) = diff.coeffs.items()
    c = diff.lo
    lo, hi = out[var]
    # express as k*v <= m (upper) and/or k*v >= m (lower)
    uppers: list[int] = []
    lowers: list[int] = []
    if op == "<":
        uppers.append(-1 - c)
    elif op == "<=":
        uppers.append(-c)
    elif op == ">":
        lowers.append(1 - c)
    elif op == ">=":
        lowers.append(-c)
    elif op == "==":
        uppers.append(-c)
        lowers.append(-c)
    for m in uppers:  # k*v <= m
        if k > 0:
            hi = min(hi, m // k)
        else:
            lo = max(lo, _ceil_div(m, k))
    for m in lowers:  # k*v >= m
        if k > 0:
            lo = max(lo, _ceil_div(m, k))
        else:
            hi = min(hi, m // k)
    out[var] = (lo, hi)


def _refine_into(cond, truth: bool, ranges: Ranges, out: dict[str, Range]) -> None:
    cond = strip_parens(cond)
    if isinstance(cond, Compare):
        if truth:
            for i, op in enumerate(cond.ops):
                _bound_pair(cond.operands[i], op, cond.operands[i + 1], ranges, out)
        elif len(cond.ops) == 1:  # not(a<b<c) is a disjunction: no refinement
            _bound_pair(cond.operands[0], _NEGATE[cond.ops[0]], cond.operands[1], ranges, out)
    elif isinstance(cond, Logical) and (cond.op == "&") == truth:
        # a & b true, or a | b false: both sides hold (negated for |)
        _refine_into(cond.left, truth, ranges, out)
        _refine_into(cond.right, truth, ranges, out)


def refine(cond, truth: bool, ranges: Ranges) -> dict[str, Range] | None:
    """Loop ranges narrowed by knowing that ``cond`` is ``truth``; ``None`` when that is impossible.

    ``None`` marks a dead branch (e.g. the else of ``a-1<0`` under a loop of extent 1), whose accesses
    never execute and so cannot be out of bounds.
    """
    out = dict(ranges)
    _refine_into(cond, truth, ranges, out)
    for lo, hi in out.values():
        if lo > hi:
            return None
    return out


# ------------------------------------------------------------------------------------- exact ranges

#: Most points ``exact_range`` enumerates: beyond it the interval bound stands (and says "cannot prove").
ENUMERATION_BUDGET = 1 << 16
#: ``exact_range``'s answer for an access whose guards no point satisfies: it never executes.
NEVER = "never"


def _vars(node) -> set[str]:
    from leir.ast import walk_expr

    return {sub.name for sub in walk_expr(node) if isinstance(sub, Var)}


def _eval(node, env):
    """Integer value of an index expression on a grid of loop values; ``None`` when it is not one."""
    import numpy as np

    node = strip_parens(node)
    if isinstance(node, Var):
        return env.get(node.name)
    if isinstance(node, Num):
        return np.int64(int(node.text)) if node.is_int and len(node.text) <= 18 else None
    if isinstance(node, Neg):
        inner = _eval(node.operand, env)
        return None if inner is None else -inner
    if isinstance(node, BinOp) and node.op in ("+", "-", "*", "//", "%"):
        left = _eval(node.left, env)
        right = _eval(node.right, env) if left is not None else None
        if right is None:
            return None
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            return left * right
        safe = np.where(right == 0, 1, right)  # a zero divisor is refused by the checker on its own
        return np.floor_divide(left, safe) if node.op == "//" else np.mod(left, safe)
    return None


_CMP = {"<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__", "==": "__eq__", "!=": "__ne__"}


def _eval_cond(cond, env):
    """Truth of a loop-variable condition on the grid; ``None`` when it depends on data."""
    cond = strip_parens(cond)
    if isinstance(cond, Compare):
        result = None
        for op, left, right in zip(cond.ops, cond.operands, cond.operands[1:], strict=False):
            a, b = _eval(left, env), _eval(right, env)
            if a is None or b is None:
                return None
            part = getattr(a, _CMP[op])(b)
            result = part if result is None else result & part
        return result
    if isinstance(cond, Logical):
        a, b = _eval_cond(cond.left, env), _eval_cond(cond.right, env)
        if a is None or b is None:
            return None
        return (a & b) if cond.op == "&" else (a | b)
    return None


def exact_range(expr, ranges: Ranges, guards=(), budget: int = ENUMERATION_BUDGET):
    """The exact ``(lo, hi)`` of an index over the loop values where ``guards`` hold, by enumeration.

    ``guards`` are ``(condition, truth)`` pairs of the enclosing ``if_then_else`` branches; those that
    share no variable with the index, or depend on tensor data, are left out (they cannot narrow it
    or cannot be decided). Returns ``NEVER`` when no loop value satisfies the guards, and ``None`` when
    the space has more than ``budget`` points or the index is not an expression of loop variables.
    """
    import numpy as np

    names = _vars(expr)
    relevant = [(cond, truth) for cond, truth in guards if _vars(cond) & names]
    for cond, _ in relevant:
        names |= _vars(cond)
    if any(name not in ranges for name in names):
        return None
    order = sorted(names)
    size = 1
    for name in order:
        lo, hi = ranges[name]
        size *= max(hi - lo + 1, 0)
        if size > budget:
            return None
    if size == 0:
        return NEVER
    axes = [np.arange(ranges[n][0], ranges[n][1] + 1, dtype=np.int64) for n in order]
    grid = [g.ravel() for g in np.meshgrid(*axes, indexing="ij")] if axes else []
    env = dict(zip(order, grid, strict=True))
    with np.errstate(all="ignore"):
        values = _eval(expr, env)
        if values is None:
            return None
        values = np.broadcast_to(values, (size,))
        mask = np.ones(size, dtype=bool)
        for cond, truth in relevant:
            holds = _eval_cond(cond, env)
            if holds is not None:
                mask &= np.broadcast_to(holds if truth else ~holds, (size,))
    if not mask.any():
        return NEVER
    chosen = values[mask]
    return int(chosen.min()), int(chosen.max())
