"""Tree rewriting beside the AST: the few generic moves every strategy is built from.

Strategies never edit text: they take a node at a *path* (``leir.ast.iter_items`` addresses — top-level
block index, then item indices), build its replacement with these helpers and put it back. Rewritten
trees carry stale source positions and sometimes redundant ``Paren`` nodes; ``normalize`` drops both so
that a rewritten program prints and hashes exactly like the same program parsed from text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import overload

from leir.ast import (
    Assign,
    BinOp,
    Block,
    Body,
    Call,
    Compare,
    Cond,
    Expr,
    IfThenElse,
    Item,
    Logical,
    Loop,
    Neg,
    Paren,
    Program,
    TensorRef,
    Var,
)
from leir.memo import memo_by_identity

Path = tuple[int, ...]
Node = Expr | Cond


class PathError(LookupError):
    """A path that does not address an item of the program (a bug in the caller, never bad input)."""


# ------------------------------------------------------------------------------ expression transforms


def _rebuild(node: Node, children: tuple[Node, ...]) -> Node:
    """The node with its direct sub-expressions replaced (same order as ``leir.ast.expr_children``)."""
    if isinstance(node, TensorRef):
        return TensorRef(node.name, node.dtype, node.scope, children)  # type: ignore[arg-type]
    if isinstance(node, BinOp):
        return BinOp(node.op, children[0], children[1])  # type: ignore[arg-type]
    if isinstance(node, Neg):
        return Neg(children[0])  # type: ignore[arg-type]
    if isinstance(node, Call):
        return Call(node.func, children)  # type: ignore[arg-type]
    if isinstance(node, IfThenElse):
        return IfThenElse(children[0], children[1], children[2])  # type: ignore[arg-type]
    if isinstance(node, Paren):
        return Paren(children[0])  # type: ignore[arg-type]
    if isinstance(node, Compare):
        return Compare(children, node.ops)  # type: ignore[arg-type]
    if isinstance(node, Logical):
        return Logical(node.op, children[0], children[1])
    return node


def _children(node: Node) -> tuple[Node, ...]:
    from leir.ast import expr_children

    return expr_children(node)


def transform(node: Node, fn: Callable[[Node], Node | None]) -> Node:
    """Bottom-up rewrite: children first, then ``fn`` on the rebuilt node (``None`` keeps it).

    Iterative, so the 400-term sums and deeply nested expressions the checker accepts never hit
    Python's recursion limit.
    """
    # post-order with an explicit stack: (node, children done?)
    stack: list[tuple[Node, bool]] = [(node, False)]
    results: list[Node] = []
    while stack:
        current, expanded = stack.pop()
        kids = _children(current)
        if not expanded and kids:
            stack.append((current, True))
            stack.extend((kid, False) for kid in reversed(kids))
            continue
        if kids:
            new_kids = tuple(results[len(results) - len(kids):])
            del results[len(results) - len(kids):]
            rebuilt = current if new_kids == kids and all(
                a is b for a, b in zip(new_kids, kids, strict=True)) else _rebuild(current, new_kids)
        else:
            rebuilt = current
        replaced = fn(rebuilt)
        results.append(rebuilt if replaced is None else replaced)
    return results[0]


def substitute_vars(node: Node, mapping: Mapping[str, Expr]) -> Node:
    """Replace loop variables by expressions everywhere (values and indices): ``i → io*f+ii``."""
    if not mapping:
        return node
    return transform(node, lambda n: mapping.get(n.name) if isinstance(n, Var) else None)


def rename_tensor(node: Node, old: str, new: str, *, scope: str | None = None) -> Node:
    """Rename every reference to tensor ``old`` (optionally moving it to another memory scope)."""

    def fn(n: Node) -> Node | None:
        if isinstance(n, TensorRef) and n.name == old:
            return TensorRef(new, n.dtype, scope or n.scope, n.indices)
        return None

    return transform(node, fn)


def replace_refs(node: Node, fn: Callable[[TensorRef], Node | None]) -> Node:
    """Rewrite tensor references (e.g. a subscript change of one tensor); ``None`` keeps a reference."""
    return transform(node, lambda n: fn(n) if isinstance(n, TensorRef) else None)


# ------------------------------------------------------------------------------------ item transforms


@overload
def map_item_exprs(item: Block, fn: Callable[[Node], Node]) -> Block: ...
@overload
def map_item_exprs(item: Assign, fn: Callable[[Node], Node]) -> Assign: ...
def map_item_exprs(item: Item, fn: Callable[[Node], Node]) -> Item:
    """Apply ``fn`` to the target and value of every statement of an item (loops unchanged)."""
    if isinstance(item, Assign):
        target = fn(item.target)
        assert isinstance(target, TensorRef), "a statement's target must stay a tensor reference"
        return Assign(target, fn(item.value))  # type: ignore[arg-type]
    return Block(item.loops, tuple(map_item_exprs(sub, fn) for sub in item.items))


def map_body_exprs(body: Body, fn: Callable[[Node], Node]) -> Body:
    """Apply ``fn`` to every statement's target and value in the whole body."""
    return Body(tuple(map_item_exprs(block, fn) for block in body.blocks))


def substitute_loops(item: Item, mapping: Mapping[str, Expr]) -> Item:
    """``substitute_vars`` over every statement of an item."""
    return map_item_exprs(item, lambda n: substitute_vars(n, mapping))


# ----------------------------------------------------------------------------------- path addressing


def item_at(body: Body, path: Path) -> Item:
    """The item (top-level block, nested block or statement) at ``path``."""
    if not path or not 0 <= path[0] < len(body.blocks):
        raise PathError(f"no top-level block at {path}")
    node: Item = body.blocks[path[0]]
    for step in path[1:]:
        if not isinstance(node, Block) or not 0 <= step < len(node.items):
            raise PathError(f"no item at {path}")
        node = node.items[step]
    return node


def block_at(body: Body, path: Path) -> Block:
    """The block (top-level or nested) at ``path``; ``PathError`` when a statement stands there."""
    item = item_at(body, path)
    if not isinstance(item, Block):
        raise PathError(f"the item at {path} is a statement, not a block")
    return item


def statement_at(body: Body, path: Path) -> Assign:
    """The statement at ``path``; ``PathError`` when a block stands there."""
    item = item_at(body, path)
    if not isinstance(item, Assign):
        raise PathError(f"the item at {path} is a block, not a statement")
    return item


def loops_at(body: Body, path: Path) -> tuple[Loop, ...]:
    """Every loop enclosing the item at ``path`` (for a block: its own header included), outermost first."""
    loops: list[Loop] = []
    node: Item = body.blocks[path[0]]
    loops.extend(body.blocks[path[0]].loops)
    for step in path[1:]:
        assert isinstance(node, Block)
        node = node.items[step]
        if isinstance(node, Block):
            loops.extend(node.loops)
    return tuple(loops)


def replace_at(body: Body, path: Path, new: Item | tuple[Item, ...]) -> Body:
    """The body with the item at ``path`` replaced by one item, several (spliced in), or none (``()``).

    A top-level path takes blocks only. The result is a fresh body; nothing is mutated.
    """
    replacement = new if isinstance(new, tuple) else (new,)
    item_at(body, path)  # validates the path
    if len(path) == 1:
        if not all(isinstance(b, Block) for b in replacement):
            raise PathError("top-level items must be blocks")
        blocks = body.blocks[: path[0]] + replacement + body.blocks[path[0] + 1 :]
        return Body(blocks)  # type: ignore[arg-type]
    parent = block_at(body, path[:-1])
    index = path[-1]
    items = parent.items[:index] + replacement + parent.items[index + 1 :]
    return replace_at(body, path[:-1], Block(parent.loops, items))


def insert_blocks(body: Body, index: int, blocks: tuple[Block, ...]) -> Body:
    """The body with top-level ``blocks`` inserted before position ``index``."""
    return Body(body.blocks[:index] + blocks + body.blocks[index:])


def with_body(program: Program, body: Body) -> Program:
    """The same signature over a new, normalised body."""
    return Program(program.signature, normalize(body))


# -------------------------------------------------------------------------------------- normalisation


def _clean(node: Node) -> Node | None:
    if isinstance(node, Paren):
        return node.inner
    return dataclasses.replace(node, pos=None) if node.pos is not None else None


def drop_parens(node: Node) -> Node:
    """Remove every ``Paren``: the printers add back exactly the parentheses the tree needs."""
    return transform(node, lambda n: n.inner if isinstance(n, Paren) else None)


def _normalize_item(item: Item) -> Item:
    """``item`` without positions and ``Paren`` nodes; the very same object where it had none, so the
    blocks a rewrite did not touch stay the objects ``leir.memo`` knows them by."""
    if isinstance(item, Assign):
        target = transform(item.target, _clean)
        value = transform(item.value, _clean)
        assert isinstance(target, TensorRef)
        if target is item.target and value is item.value and item.pos is None:
            return item
        return Assign(target, value)  # type: ignore[arg-type]
    loops = tuple(lp if lp.pos is None else Loop(lp.kind, lp.extent, lp.var) for lp in item.loops)
    items = tuple(_normalize_item(sub) for sub in item.items)
    if item.pos is None and all(a is b for a, b in zip(loops, item.loops, strict=True)) \
            and all(a is b for a, b in zip(items, item.items, strict=True)):
        return item
    return Block(loops, items)


@memo_by_identity(8192)
def _normalized_block(block: Block) -> Block:
    """A top-level block normalised, kept per block object: a rewritten body is mostly blocks of its
    parent, which were normalised (and so are their own result) when the parent was made."""
    normal = _normalize_item(block)
    assert isinstance(normal, Block)
    return normal


def normalize(body: Body) -> Body:
    """Drop source positions and redundant ``Paren`` nodes so rewritten trees print canonically."""
    blocks = tuple(_normalized_block(block) for block in body.blocks)
    if body.pos is None and all(a is b for a, b in zip(blocks, body.blocks, strict=True)):
        return body
    return Body(blocks)


# ---- graph


def replace_expr_at(node: Node, path: Path, new: Node) -> Node:
    """``node`` with its sub-expression at ``path`` (child positions, ``expr_children`` order) replaced."""
    if not path:
        return new
    kids = list(_children(node))
    kids[path[0]] = replace_expr_at(kids[path[0]], path[1:], new)
    return _rebuild(node, tuple(kids))


def expr_at(node: Node, path: Path) -> Node:
    """The sub-expression of ``node`` at ``path``."""
    for step in path:
        node = _children(node)[step]
    return node
