"""Operator precedence shared by the parser and the printers.

One table decides where parentheses are required; the printer emits exactly those, and the parser drops
exactly those (keeping any others as ``Paren``), which is what makes ``canonical(parse(s)) == s`` exact.
"""

from __future__ import annotations

from leir.ast import BinOp, Neg

#: Binding strength: higher binds tighter. Atoms (literals, references, calls, parentheses) are 5.
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "%": 2, "neg": 3, "**": 4}
ATOM = 5


def precedence(node: object) -> int:
    if isinstance(node, BinOp):
        return PRECEDENCE[node.op]
    if isinstance(node, Neg):
        return PRECEDENCE["neg"]
    return ATOM


def needs_parens(child: object, parent: str, side: str) -> bool:
    """Whether ``child`` must be parenthesised as the ``side`` operand of ``parent`` (an op or "neg").

    Binary operators are left-associative except ``**``, whose base must be an atom and whose exponent
    is a unary expression (so ``a**-b`` and ``a**b**c`` need none).
    """
    child_prec = precedence(child)
    if parent == "**":
        return child_prec < ATOM if side == "left" else child_prec < PRECEDENCE["neg"]
    if parent == "neg":
        return child_prec < PRECEDENCE["neg"]
    parent_prec = PRECEDENCE[parent]
    if side == "left":
        return child_prec < parent_prec
    return child_prec <= parent_prec
