"""The immutable LEIR syntax tree.

Every other module (parser, printers, checker, interpreter, strategies, lowering, frontend) speaks in
these nodes, so they are plain frozen dataclasses with no behaviour beyond small helpers. Source
positions ride along for diagnostics but never take part in equality or hashing: two programs are
equal exactly when their canonical texts are equal.

Parentheses: the printers emit the minimal parentheses that preserve the tree. A ``Paren`` node exists
only to keep *redundant* parentheses found in input text (the public data has a few), so that
``canonical(parse(s)) == s`` holds byte for byte; generated trees never need it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, overload

#: Element types the language accepts. The checker rejects the ``UNSUPPORTED_DTYPES`` ones.
DTYPES: tuple[str, ...] = (
    "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2",
    "i8", "i16", "i32", "i64",
    "u8", "u16", "u32", "u64",
    "bool",
)
#: Codes the reference converter knows but no lowering supports yet: parsed, then refused by the checker.
UNSUPPORTED_DTYPES: tuple[str, ...] = ("c64", "c128")
FLOAT_DTYPES = frozenset({"f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"})
#: Float types NumPy cannot compute in: stored as float32 holding only values of the type, computed in
#: float32 and rounded on every store (``f8e4m3`` is OCP's e4m3fn: no infinities, NaN only 0x7f/0xff).
EMULATED_FLOAT_DTYPES = frozenset({"bf16", "f8e4m3", "f8e5m2"})
INT_DTYPES = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})

#: Memory scopes: global, shared, local.
SCOPES: tuple[str, ...] = ("g", "s", "l")
#: Loop kinds: serial, parallel, vectorised, unrolled, GPU-bound.
LOOP_KINDS: tuple[str, ...] = ("L", "P", "V", "U", "B")
#: Signature roles, in the order a signature lists them.
ROLES: tuple[str, ...] = ("input", "param", "const", "output")

#: One-argument and two-argument intrinsic calls.
#: ``sin``/``cos`` are a documented superset of the public language (docs/leir.md §6): rotary embeddings
#: computed in ``forward`` need them, and no public program uses them, so the corpus is unchanged.
UNARY_CALLS = frozenset({"exp", "log", "sqrt", "abs", "erf", "sin", "cos"})
BINARY_CALLS = frozenset({"max", "min"})
#: Arithmetic operators (``//`` and ``%`` are meant for integer index expressions).
BINARY_OPS = frozenset({"+", "-", "*", "/", "**", "//", "%"})
COMPARE_OPS = frozenset({"<", "<=", ">", ">=", "==", "!="})
LOGIC_OPS = frozenset({"&", "|"})


class Pos(NamedTuple):
    """Where a node came from in the source text (1-based line/column, 0-based offsets).

    A named tuple rather than a dataclass: the parser makes one per node, and tuples are built fastest.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    start: int
    end: int


def _pos() -> Pos | None:
    return field(default=None, compare=False, hash=False, repr=False)  # type: ignore[return-value]


# ----------------------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Num:
    """A numeric literal, spelled exactly as written (``2``, ``0.5``, ``1e-05``) so printing is exact."""

    text: str
    pos: Pos | None = _pos()

    @property
    def is_int(self) -> bool:
        return self.text.isdigit()

    @property
    def value(self) -> int | float:
        return int(self.text) if self.is_int else float(self.text)


@dataclass(frozen=True, slots=True)
class Inf:
    """The literal ``inf`` (``-inf`` is ``Neg(Inf())``)."""

    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Var:
    """A loop variable used as an index or as a value (argmax writes the index)."""

    name: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class TensorRef:
    """``Name^{dtype,scope}_{i1,...}``; ``indices == ()`` is a scalar reference."""

    name: str
    dtype: str
    scope: str
    indices: tuple[Expr, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class BinOp:
    """``left op right`` with ``op`` in ``BINARY_OPS``."""

    op: str
    left: Expr
    right: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Neg:
    """Unary minus."""

    operand: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Call:
    """``exp log sqrt abs erf sin cos`` (one argument) or ``max min`` (two)."""

    func: str
    args: tuple[Expr, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class IfThenElse:
    """``if_then_else(cond, then, otherwise)``."""

    cond: Cond
    then: Expr
    otherwise: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Paren:
    """Parentheses the minimal printer would not emit; kept only for byte-exact round trips."""

    inner: Expr
    pos: Pos | None = _pos()


Expr = Num | Inf | Var | TensorRef | BinOp | Neg | Call | IfThenElse | Paren


# ------------------------------------------------------------------------------------------ conditions


@dataclass(frozen=True, slots=True)
class Compare:
    """A (possibly chained) comparison: ``2<=c<258`` is ``operands=(2, c, 258), ops=('<=', '<')``."""

    operands: tuple[Expr, ...]
    ops: tuple[str, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Logical:
    """``left & right`` or ``left | right``; left-associative, one precedence level."""

    op: str
    left: Cond
    right: Cond
    pos: Pos | None = _pos()


#: A condition: a comparison, a logical combination, or a lone expression (a bool tensor reference).
Cond = Compare | Logical | Num | Inf | Var | TensorRef | BinOp | Neg | Call | IfThenElse | Paren


# --------------------------------------------------------------------------------------------- program


@dataclass(frozen=True, slots=True)
class Loop:
    """``KIND^{extent}_{var=0}``."""

    kind: str
    extent: int
    var: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Assign:
    """``target = value``; whether it is a reduction, accumulation or recurrence is the checker's call."""

    target: TensorRef
    value: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Block:
    """A loop-nest header and the items run, in order, in every iteration of its innermost loop."""

    loops: tuple[Loop, ...]
    items: tuple[Item, ...]
    pos: Pos | None = _pos()


Item = Assign | Block


@dataclass(frozen=True, slots=True)
class Body:
    """The sequence of top-level blocks, executed in order."""

    blocks: tuple[Block, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class TensorDecl:
    """One known tensor of the signature."""

    name: str
    role: str
    dtype: str
    shape: tuple[int, ...]
    #: where the declaration stands in a ``.leir`` header (for diagnostics about it)
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Signature:
    """The ordered known tensors: inputs, then parameters/constants, then outputs."""

    tensors: tuple[TensorDecl, ...]

    def get(self, name: str) -> TensorDecl | None:
        for decl in self.tensors:
            if decl.name == name:
                return decl
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.tensors)

    def by_role(self, *roles: str) -> tuple[TensorDecl, ...]:
        return tuple(d for d in self.tensors if d.role in roles)


@dataclass(frozen=True, slots=True)
class Program:
    """A LEIR program: signature plus body. Equality ignores source positions."""

    signature: Signature
    body: Body


# ------------------------------------------------------------------------------------------- traversal


def expr_children(node: Expr | Cond) -> tuple[Expr | Cond, ...]:
    """Direct sub-expressions of an expression or condition, in source order."""
    if isinstance(node, TensorRef):
        return node.indices
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, Neg):
        return (node.operand,)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, IfThenElse):
        return (node.cond, node.then, node.otherwise)
    if isinstance(node, Paren):
        return (node.inner,)
    if isinstance(node, Compare):
        return node.operands
    if isinstance(node, Logical):
        return (node.left, node.right)
    return ()


def walk_expr(node: Expr | Cond):
    """Pre-order iteration over an expression tree, the node itself first."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(expr_children(current)))


def tensor_refs(node: Expr | Cond):
    """Every tensor reference in an expression, including those nested in indices (pre-order)."""
    for sub in walk_expr(node):
        if isinstance(sub, TensorRef):
            yield sub


def iter_items(body: Body | Block):
    """Yield ``(path, item, enclosing_loops)`` for every item, depth first in execution order.

    ``path`` is a tuple of integers (top-level block index, then item indices), a stable address for a
    statement or block that the checker, strategies and lowering all use to talk about sites.
    ``enclosing_loops`` lists every loop around the item, outermost first.
    """
    if isinstance(body, Body):
        for b_index, block in enumerate(body.blocks):
            yield (b_index,), block, ()
            yield from _iter_block(block, (b_index,), block.loops)
    else:
        yield from _iter_block(body, (), body.loops)


def _iter_block(block: Block, path: tuple[int, ...], loops: tuple[Loop, ...]):
    for i, item in enumerate(block.items):
        item_path = path + (i,)
        yield item_path, item, loops
        if isinstance(item, Block):
            yield from _iter_block(item, item_path, loops + item.loops)


def statements(body: Body | Block):
    """Yield ``(path, assign, enclosing_loops)`` for every statement in execution order."""
    for path, item, loops in iter_items(body):
        if isinstance(item, Assign):
            yield path, item, loops


@overload
def strip_parens(node: Expr) -> Expr: ...
@overload
def strip_parens(node: Cond) -> Cond: ...
def strip_parens(node: Expr | Cond) -> Expr | Cond:
    """The expression without any redundant ``Paren`` wrappers at its top (an expression stays one)."""
    while isinstance(node, Paren):
        node = node.inner
    return node
