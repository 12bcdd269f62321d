"""AST → text: the canonical form (compact, exactly the public data's spelling) and a pretty form.

The canonical text has no whitespace and minimal parentheses; it is what the dataset stores, what
prompts show and what the content hash covers. The pretty text puts one block header per line with its
statements indented beneath, for people and for diffs; it parses back to the same tree.
"""

from __future__ import annotations

from leir.ast import (
    Assign,
    BinOp,
    Block,
    Body,
    Call,
    Compare,
    IfThenElse,
    Inf,
    Logical,
    Loop,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
)
from leir.memo import memo_by_identity
from leir.precedence import needs_parens


def loop_text(loop: Loop) -> str:
    return f"{loop.kind}^{{{loop.extent}}}_{{{loop.var}=0}}"


def _operand(child, parent: str, side: str) -> str:
    text = expr_text(child)
    return f"({text})" if needs_parens(child, parent, side) else text


def expr_text(node) -> str:
    """Canonical text of an expression or condition."""
    kind = type(node)
    if kind is TensorRef:
        head = f"{node.name}^{{{node.dtype},{node.scope}}}"
        if not node.indices:
            return head
        return head + "_{" + ",".join(expr_text(i) for i in node.indices) + "}"
    if kind is BinOp:
        return _operand(node.left, node.op, "left") + node.op + _operand(node.right, node.op, "right")
    if kind is Num:
        return node.text
    if kind is Var:
        return node.name
    if kind is Call:
        return node.func + "(" + ",".join(expr_text(a) for a in node.args) + ")"
    if kind is Neg:
        return "-" + _operand(node.operand, "neg", "right")
    if kind is Inf:
        return "inf"
    if kind is IfThenElse:
        return f"if_then_else({expr_text(node.cond)},{expr_text(node.then)},{expr_text(node.otherwise)})"
    if kind is Paren:
        return "(" + expr_text(node.inner) + ")"
    if kind is Compare:
        parts = [expr_text(node.operands[0])]
        for op, operand in zip(node.ops, node.operands[1:], strict=True):
            parts.append(op)
            parts.append(expr_text(operand))
        return "".join(parts)
    if kind is Logical:
        return expr_text(node.left) + node.op + expr_text(node.right)
    raise TypeError(f"not a LEIR expression: {node!r}")


def _item_text(item) -> str:
    if type(item) is Assign:
        return expr_text(item.target) + "=" + expr_text(item.value) + ";"
    return _block_text(item) + ";"


def _block_text(block: Block) -> str:
    header = "".join(loop_text(loop) for loop in block.loops)
    return header + "[" + "".join(_item_text(item) for item in block.items) + "]"


@memo_by_identity(4096)
def _top_block_text(block: Block) -> str:
    """A top-level block's text, kept per block object: a rewrite keeps the blocks it did not touch, and
    every step compares and quotes whole bodies, so most of a body's text is already known."""
    return _block_text(block) + ";"


def canonical(node) -> str:
    """The canonical (whitespace-free) text of a body, block, statement, loop or expression."""
    if isinstance(node, Program):
        node = node.body
    if isinstance(node, Body):
        return "".join(_top_block_text(block) for block in node.blocks)
    if isinstance(node, Block):
        return _block_text(node) + ";"
    if isinstance(node, Assign):
        return _item_text(node)
    if isinstance(node, Loop):
        return loop_text(node)
    return expr_text(node)


def _pretty_block(block: Block, depth: int, out: list[str]) -> None:
    indent = "  " * depth
    out.append(indent + "".join(loop_text(loop) for loop in block.loops) + "[")
    for item in block.items:
        if isinstance(item, Assign):
            out.append(f"{indent}  {expr_text(item.target)} = {expr_text(item.value)};")
        else:
            _pretty_block(item, depth + 1, out)
    out.append(indent + "];")


def pretty(node) -> str:
    """Readable text: one block header per line, statements and nested blocks indented beneath it."""
    if isinstance(node, Program):
        node = node.body
    if isinstance(node, Block):
        node = Body((node,))
    if not isinstance(node, Body):
        return canonical(node)
    out: list[str] = []
    for block in node.blocks:
        _pretty_block(block, 0, out)
    return "\n".join(out) + "\n"
