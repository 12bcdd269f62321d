"""AST → LaTeX for people: LEIR is LaTeX-flavoured, so reviewers read a program as typeset math (KaTeX).

The text form ``L^{2}_{i=0}[S^{f32,g}=S^{f32,g}+A^{f32,g}_{i}/B^{f32,g}_{i};];`` becomes a loop operator
with its extent above and its variable below, a bracketed array of statements, fractions for ``/``,
floors for ``//``, ``\\exp``/``\\sqrt`` for calls and a ``cases`` environment for ``if_then_else``. The
dtype and scope stay visible as a small superscript so nothing the text says is lost. Output is
deterministic (a pure function of the tree); it is display only and is never parsed back.
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

_COMPARE = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "==": "=", "!=": r"\ne"}
_LOGICAL = {"&": r"\land", "|": r"\lor"}
#: Calls with a LaTeX operator of their own; the rest print as ``\operatorname{name}``.
_NAMED_CALLS = {"exp": r"\exp", "log": r"\log", "sin": r"\sin", "cos": r"\cos", "max": r"\max",
                "min": r"\min"}
#: Binding strength for deciding parentheses (fractions, floors and powers bracket their own operands).
_STRENGTH = {"+": 1, "-": 1, "*": 2, "%": 2, "neg": 3, "**": 4}


def _name(text: str) -> str:
    """A loop variable or tensor name: one letter as is, longer names upright-italic, ``_`` escaped."""
    escaped = text.replace("_", r"\_")
    return escaped if len(text) == 1 else rf"\mathit{{{escaped}}}"


def _strength(node) -> int:
    kind = type(node)
    if kind is BinOp:
        return _STRENGTH.get(node.op, 5)  # "/" and "//" typeset as self-bracketing structures
    if kind is Neg:
        return _STRENGTH["neg"]
    return 5


def _wrapped(node, parent_strength: int, right_of_minus: bool = False) -> str:
    text = to_latex(node)
    strength = _strength(node)
    if strength < parent_strength or (right_of_minus and strength == parent_strength):
        return rf"\left({text}\right)"
    return text


def _binop(node: BinOp) -> str:
    op = node.op
    if op == "/":
        return rf"\frac{{{to_latex(node.left)}}}{{{to_latex(node.right)}}}"
    if op == "//":
        return rf"\left\lfloor \frac{{{to_latex(node.left)}}}{{{to_latex(node.right)}}} \right\rfloor"
    if op == "**":
        return f"{{{_wrapped(node.left, 5)}}}^{{{to_latex(node.right)}}}"
    strength = _STRENGTH[op]
    symbol = {"+": "+", "-": "-", "*": r"\cdot", "%": r"\bmod"}[op]
    left = _wrapped(node.left, strength)
    right = _wrapped(node.right, strength, right_of_minus=op in "-%")
    return f"{left} {symbol} {right}"


def _call(node: Call) -> str:
    args = [to_latex(arg) for arg in node.args]
    if node.func == "sqrt":
        return rf"\sqrt{{{args[0]}}}"
    if node.func == "abs":
        return rf"\left|{args[0]}\right|"
    head = _NAMED_CALLS.get(node.func, rf"\operatorname{{{node.func}}}")
    return rf"{head}\left({', '.join(args)}\right)"


def _tensor(node: TensorRef) -> str:
    head = rf"{_name(node.name)}^{{\scriptscriptstyle {node.dtype},{node.scope}}}"
    if not node.indices:
        return head
    return head + "_{" + ",".join(to_latex(i) for i in node.indices) + "}"


def to_latex(node) -> str:
    """LaTeX of an expression, condition, statement, loop, block, body or program."""
    kind = type(node)
    if kind is TensorRef:
        return _tensor(node)
    if kind is BinOp:
        return _binop(node)
    if kind is Num:
        return node.text
    if kind is Var:
        return _name(node.name)
    if kind is Inf:
        return r"\infty"
    if kind is Neg:
        return "-" + _wrapped(node.operand, _STRENGTH["neg"] + 1)
    if kind is Call:
        return _call(node)
    if kind is Paren:
        return rf"\left({to_latex(node.inner)}\right)"
    if kind is IfThenElse:
        return (rf"\begin{{cases}} {to_latex(node.then)} & \text{{if }} {to_latex(node.cond)} \\ "
                rf"{to_latex(node.otherwise)} & \text{{otherwise}} \end{{cases}}")
    if kind is Compare:
        parts = [to_latex(node.operands[0])]
        for op, operand in zip(node.ops, node.operands[1:], strict=True):
            parts.append(f" {_COMPARE[op]} {to_latex(operand)}")
        return "".join(parts)
    if kind is Logical:
        return f"{to_latex(node.left)} {_LOGICAL[node.op]} {to_latex(node.right)}"
    if kind is Assign:
        return f"{to_latex(node.target)} = {to_latex(node.value)}"
    if kind is Loop:
        return rf"\mathrm{{{node.kind}}}^{{{node.extent}}}_{{{_name(node.var)}=0}}"
    if kind is Block:
        return _block(node)
    if isinstance(node, Program):
        node = node.body
    if isinstance(node, Body):
        return r" \\ ".join(_block(block) for block in node.blocks)
    raise TypeError(f"not a LEIR node: {node!r}")


def _block(block: Block) -> str:
    header = r"\,".join(to_latex(loop) for loop in block.loops)
    rows = r" \\ ".join(to_latex(item) for item in block.items)
    return rf"{header}\left[\begin{{array}}{{l}} {rows} \end{{array}}\right]"


def program_latex(program: Program | Body) -> list[str]:
    """One display formula per top-level block, in program order (how the pages lay a program out)."""
    body = program.body if isinstance(program, Program) else program
    return [_block(block) for block in body.blocks]
