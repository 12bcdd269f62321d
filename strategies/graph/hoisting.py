"""Computing a sub-expression ahead, in its own block: what expression_splitting and CSE share.

A sub-expression can move out of its statement into a new intermediate when computing it earlier gives
the same values: it is not under an ``if_then_else`` branch or condition (those are evaluated lazily,
guarding reads such as padding), not part of a subscript, does not read its own statement's target, and
reads nothing that the blocks from the new block's position up to its last use write. The intermediate
is indexed by the loop variables the sub-expression uses, in header order, so it holds one value per
distinct point of those loops — a loop-invariant sub-expression is computed once per invariant point.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from leir.analysis import iterations, writes
from leir.ast import (
    FLOAT_DTYPES,
    Assign,
    BinOp,
    Block,
    Call,
    Expr,
    IfThenElse,
    Loop,
    Neg,
    Num,
    Program,
    TensorRef,
    Var,
    tensor_refs,
    walk_expr,
)
from leir.ast import statements as all_statements
from leir.dtypes import dtype_bytes, is_emulated
from leir.rewrite import insert_blocks, item_at, replace_at, replace_expr_at, statement_at

Path = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One place a sub-expression appears: its statement, its position in the RHS, the loops around it."""

    stmt_path: Path
    expr_path: Path
    node: Expr
    loops: tuple[Loop, ...]


def _compound(node: Expr) -> bool:
    if isinstance(node, BinOp | Call | IfThenElse):
        return True
    return isinstance(node, Neg) and not isinstance(node.operand, Num | Var | TensorRef)


def value_subexpressions(stmt: Assign) -> Iterator[tuple[Path, Expr]]:
    """``(path, node)`` for every compound, hoistable sub-expression of the RHS, root first.

    Skipped: literal-only arithmetic, anything reading the statement's own target, subscripts, and
    everything under an ``if_then_else`` (the whole ``if_then_else`` itself is offered).
    """
    stack: list[tuple[Path, Expr]] = [((), stmt.value)]
    while stack:
        path, node = stack.pop()
        if _compound(node) and any(True for _ in tensor_refs(node)) and \
                all(ref.name != stmt.target.name for ref in tensor_refs(node)):
            yield path, node
        if isinstance(node, BinOp | Neg | Call):
            kids = (node.left, node.right) if isinstance(node, BinOp) else \
                (node.operand,) if isinstance(node, Neg) else node.args
            stack.extend((path + (i,), kid) for i, kid in reversed(list(enumerate(kids))))


def occurrences(program: Program) -> Iterator[Occurrence]:
    """Every hoistable sub-expression occurrence of the program, in execution order."""
    for path, stmt, loops in all_statements(program.body):
        # bf16/fp8 statements compute in f32 and round once on the store: a hoisted temporary would round
        # the sub-expression too, so the rewrite would not be exact (issue 46)
        if stmt.target.dtype not in FLOAT_DTYPES or is_emulated(stmt.target.dtype):
            continue
        for expr_path, node in value_subexpressions(stmt):
            yield Occurrence(path, expr_path, node, loops)


def used_vars(node: Expr) -> frozenset[str]:
    return frozenset(n.name for n in walk_expr(node) if isinstance(n, Var))


def hoist_loops(node: Expr, loops: tuple[Loop, ...]) -> tuple[Loop, ...]:
    """The loops the hoisted block runs: those whose variables the sub-expression uses, in order."""
    names = used_vars(node)
    kept = tuple(lp for lp in loops if lp.var in names)
    return kept or (Loop("L", 1, "a"),)


def reads_stable(program: Program, node: Expr, first_block: int, last_block: int) -> str | None:
    """Why computing ``node`` before block ``first_block`` may change its value up to ``last_block``."""
    needed = {ref.name for ref in tensor_refs(node)}
    for index in range(first_block, last_block + 1):
        clash = sorted(writes(program.body.blocks[index]) & needed)
        if clash:
            return f"block {index + 1} writes {', '.join(clash)}, which the sub-expression reads"
    return None


@dataclass(frozen=True, slots=True)
class Hoisted:
    """The result of hoisting: the new program and what traces quote about it."""

    program: Program
    block: Block
    ref: TensorRef


def hoist(program: Program, occs: tuple[Occurrence, ...], name: str) -> Hoisted:
    """Compute ``occs[0].node`` into intermediate ``name`` before the first occurrence's block; reuse it."""
    from leir.rewrite import with_body

    first = occs[0]
    loops = hoist_loops(first.node, first.loops)
    dtype = item_at(program.body, first.stmt_path).target.dtype  # type: ignore[union-attr]
    indices = tuple(Var(lp.var) for lp in loops if lp.extent > 1 or lp.var in used_vars(first.node))
    ref = TensorRef(name, dtype, "g", indices)
    block = Block(loops, (Assign(ref, first.node),))
    body = program.body
    for occ in occs:
        stmt = statement_at(body, occ.stmt_path)
        value = replace_expr_at(stmt.value, occ.expr_path, ref)
        body = replace_at(body, occ.stmt_path, Assign(stmt.target, value))  # type: ignore[arg-type]
    at = min(occ.stmt_path[0] for occ in occs)
    return Hoisted(with_body(program, insert_blocks(body, at, (block,))), block, ref)


def intermediate_bytes(block: Block, dtype: str) -> int:
    """Bytes of the hoisted intermediate: one element per iteration of its block."""
    return iterations(block.loops) * dtype_bytes(dtype)
