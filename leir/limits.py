"""The size limits of LEIR programs, measured without recursion, and the recursion budget to honour them.

Every layer walks the syntax tree recursively (printers, checker, interpreter, lowering), and the
lowering goes through TVMScript text, which Python's own parser reads: it allows at most 200 nested
brackets and 100 levels of indentation. Rather than let each consumer fail in its own way (a
``RecursionError`` in ``fmt``, a parse failure in TVM), the language has three limits, checked here
iteratively and reported with a position, so every command refuses the same programs with the same
message (docs/leir.md §7):

* ``MAX_TERMS`` — the depth of an expression's tree. A sum of n terms is n deep (``a+b+c`` is
  ``(a+b)+c``), so this bounds the length of operator chains. The parser refuses deeper expressions.
* ``MAX_NESTING`` — bracket nesting: how deeply parentheses, calls, ``if_then_else``, indices and unary
  minus nest, where the left operand of an operator of the same precedence adds no level (so a long
  sum is flat, ``a-(b-(c-d))`` is three deep). Checked by the checker (``too-deep``).
* ``MAX_LOOPS`` — loops around one statement, over all enclosing headers. Checked by the checker.
* ``MAX_EXTENT`` — the largest loop extent and signature dimension: 2^31 − 1, since the lowering counts
  loops and indexes tensors in int32. Checked by the checker (``extent-too-large``, ``bad-signature``)
  with the position of the loop, so an extent of 10^29 is refused by ``check`` rather than failing inside
  TVMScript in ``lower`` and with an ``OverflowError`` in ``run``. How much work a program may ask of the
  NumPy interpreter is its own budget (``leir.interpreter.MAX_EXECUTIONS``, counted by
  ``statement_executions``): nested extents within this limit can still multiply to 10^12.
* ``MAX_LITERAL_EXTENT`` — the largest extent the parser converts (``i64``): a longer number is
  refused at its digits (``literal-out-of-range``) before ``int()``, so 5,000 digits never reach it.

``ensure_recursion_limit`` raises Python's recursion limit enough for trees within ``MAX_TERMS``; it only
ever raises it, so concurrent callers cannot lower it under one another.
"""

from __future__ import annotations

import sys

from leir.ast import (
    Assign,
    BinOp,
    Block,
    Call,
    Compare,
    IfThenElse,
    Logical,
    Neg,
    Paren,
    TensorRef,
    strip_parens,
)
from leir.precedence import PRECEDENCE

__all__ = ["MAX_TERMS", "MAX_NESTING", "MAX_LOOPS", "MAX_EXTENT", "MAX_LITERAL_EXTENT", "tree_depth",
           "nesting_depth", "depths", "ensure_recursion_limit", "statement_executions", "spell_int"]

#: Deepest expression tree (and longest operator chain) any command accepts.
MAX_TERMS = 1000
#: Deepest bracket nesting (see the module docstring) a checked program may have.
MAX_NESTING = 48
#: Most loops around one statement.
MAX_LOOPS = 64
#: Largest loop extent and signature dimension (the lowering's loop counters and indices are int32).
MAX_EXTENT = 2**31 - 1
#: Digits of an integer a message spells in full; longer ones are shortened (see ``spell_int``).
_SPELLED_DIGITS = 24
#: Largest extent the parser converts: the largest ``i64``, what loop variables compute in.
MAX_LITERAL_EXTENT = 2**63 - 1
#: Recursion limit that covers walking a ``MAX_TERMS``-deep tree in every layer, TVM's parser included.
RECURSION_LIMIT = 30 * MAX_TERMS


def ensure_recursion_limit() -> None:
    """Make sure Python's recursion limit is at least ``RECURSION_LIMIT`` (never lowers it)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def spell_int(value: int) -> str:
    """``value`` for a message: in full up to 24 digits, else its first digits and its length (a
    5,000-digit dimension is not repeated in the error that refuses it)."""
    text = str(abs(value)) if abs(value).bit_length() < 14000 else None  # str() refuses > 4300 digits
    sign = "-" if value < 0 else ""
    if text is not None and len(text) <= _SPELLED_DIGITS:
        return sign + text
    digits = len(text) if text is not None else int(abs(value).bit_length() * 0.30103) + 1
    lead = text[:6] if text is not None else ""
    return f"{sign}{lead}… ({digits:,} digits)" if lead else f"{sign}a number of about {digits:,} digits"


def statement_executions(body) -> int:
    """Statement executions of one run of a program ``body``: over its statements, the product of the
    extents of the loops around each (what the interpreter evaluates), without recursion."""
    total = 0
    stack = [(block, 1) for block in body.blocks]
    while stack:
        block, outer = stack.pop()
        count = outer
        for loop in block.loops:
            count *= loop.extent
        for item in block.items:
            if isinstance(item, Assign):
                total += count
            elif isinstance(item, Block):
                stack.append((item, count))
    return total


def _children(node):
    kind = type(node)
    if kind is BinOp:
        return (node.left, node.right)
    if kind is TensorRef:
        return node.indices
    if kind is Neg:
        return (node.operand,)
    if kind is Call:
        return node.args
    if kind is IfThenElse:
        return (node.cond, node.then, node.otherwise)
    if kind is Paren:
        return (node.inner,)
    if kind is Compare:
        return node.operands
    if kind is Logical:
        return (node.left, node.right)
    return ()


def tree_depth(node) -> int:
    """Depth of the expression tree (a leaf is 1), computed without recursion."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > deepest:
            deepest = depth
        for child in _children(current):
            stack.append((child, depth + 1))
    return deepest


def _level(parent, child, index: int) -> int:
    """Levels ``child`` adds under ``parent``: 0 for the left operand of a same-precedence operator."""
    if type(parent) is BinOp:
        if index == 0 and type(child) is BinOp and child.op != "**" and parent.op != "**" and (
                PRECEDENCE[child.op] >= PRECEDENCE[parent.op]):
            return 0
        if type(child) is BinOp and PRECEDENCE[child.op] > PRECEDENCE[parent.op]:
            return 0  # a tighter operator needs no brackets on either side
        if type(child) is not BinOp and type(child) is not Neg:
            return 0  # a leaf or a bracketed form carries its own level
        return 1
    if type(parent) is Compare:
        return len(parent.ops)  # a chain a<b<c<… is lowered to nested T.And(T.And(…), …)
    return 1  # a Logical too: & and | are the calls T.And / T.Or


def depths(node) -> tuple[int, int]:
    """``(tree depth, bracket nesting)`` of an expression or condition, in one walk without recursion."""
    deepest = nested = 0
    stack = [(node, 1, 0)]
    while stack:
        current, depth, nesting = stack.pop()
        while type(current) is Paren:  # kept only for printing: the lowering drops redundant parentheses
            current, depth = current.inner, depth + 1
        if depth > deepest:
            deepest = depth
        if nesting > nested:
            nested = nesting
        for index, child in enumerate(_children(current)):
            bare = strip_parens(child)
            stack.append((child, depth + 1, nesting + _level(current, bare, index)))
    return deepest, nested


def nesting_depth(node) -> int:
    """Bracket nesting of an expression or condition (see the module docstring), without recursion."""
    return depths(node)[1]
