"""Program analyses shared by the strategies, the interpreter and the lowering — one implementation each.

Every legality rule of the strategy catalogue comes down to a few questions: what does an item read and
write, which earlier item must stay before which later one (flow, anti and output dependences), which
loops carry a dependence (reduction and recurrence axes, last-writer races), which items produce or
consume a tensor, and how an index depends on the loop variables. They are answered here, from the
syntax tree and the checker's ``ProgramInfo``, so no strategy re-derives them its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from leir.ast import (
    Assign,
    BinOp,
    Block,
    Body,
    Compare,
    Cond,
    Expr,
    Item,
    Logical,
    Loop,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
    iter_items,
    statements,
    strip_parens,
    tensor_refs,
    walk_expr,
)
from leir.checker import check
from leir.dtypes import tensor_nbytes
from leir.gpu_limits import MAX_SHARED_BYTES
from leir.memo import memo_by_identity
from leir.names import first_unused, loop_var_names, tensor_names
from leir.rewrite import _rebuild, block_at, statement_at, substitute_vars
from leir.semantics import ProgramInfo, StmtKind

Path = tuple[int, ...]


# ----------------------------------------------------------------------------------- the checker once


@memo_by_identity(256)
def program_info(program: Program) -> ProgramInfo:
    """The checker's reading of a program, kept per program object (``leir.memo``): strategies ask for it
    many times per state."""
    return check(program)


# -------------------------------------------------------------------------------- read and write sets


@memo_by_identity(16384)
def stmt_reads(stmt: Assign) -> tuple[TensorRef, ...]:
    """Every tensor reference a statement reads: its value, and index tensors of its target (gathers);
    kept per statement object, since the analyses and the cost model ask for it on every state."""
    refs = list(tensor_refs(stmt.value))
    for index in stmt.target.indices:
        refs.extend(tensor_refs(index))
    return tuple(refs)


def item_statements(item: Item) -> Iterator[tuple[Path, Assign, tuple[Loop, ...]]]:
    """``(relative path, statement, enclosing loops)`` for every statement of an item, execution order."""
    if isinstance(item, Assign):
        yield (), item, ()
        return
    for path, sub, loops in iter_items(item):
        if isinstance(sub, Assign):
            yield path, sub, loops


def reads(item: Item) -> frozenset[str]:
    """Names of the tensors an item reads anywhere (including self-reads of accumulators)."""
    return frozenset(ref.name for _, stmt, _ in item_statements(item) for ref in stmt_reads(stmt))


def writes(item: Item) -> frozenset[str]:
    """Names of the tensors an item writes."""
    return frozenset(stmt.target.name for _, stmt, _ in item_statements(item))


class DepKind(StrEnum):
    """Why a later item must stay after an earlier one."""

    #: read after write: the later item reads what the earlier one writes.
    FLOW = "flow"
    #: write after read: the later item overwrites what the earlier one reads.
    ANTI = "anti"
    #: write after write: both write the same tensor (the final value depends on their order).
    OUTPUT = "output"


@dataclass(frozen=True, slots=True, order=True)
class Dependence:
    kind: DepKind
    tensor: str


def dependences(first: Item, second: Item) -> tuple[Dependence, ...]:
    """The dependences from ``first`` (executed earlier) to ``second``, sorted; empty when they commute."""
    r1, w1, r2, w2 = reads(first), writes(first), reads(second), writes(second)
    deps = {Dependence(DepKind.FLOW, t) for t in w1 & r2}
    deps |= {Dependence(DepKind.ANTI, t) for t in r1 & w2}
    deps |= {Dependence(DepKind.OUTPUT, t) for t in w1 & w2}
    return tuple(sorted(deps))


def independent(first: Item, second: Item) -> bool:
    """True when the two items may run in either order with identical results."""
    return not dependences(first, second)


# ------------------------------------------------------------------------------ producers, consumers


def producers(body: Body, tensor: str) -> tuple[Path, ...]:
    """Paths of the statements that write ``tensor``, in execution order."""
    return tuple(path for path, stmt, _ in statements(body) if stmt.target.name == tensor)


def consumers(body: Body, tensor: str) -> tuple[Path, ...]:
    """Paths of the statements that read ``tensor`` (self-reads of an accumulator included)."""
    return tuple(path for path, stmt, _ in statements(body)
                 if any(ref.name == tensor for ref in stmt_reads(stmt)))


def readers_after(body: Body, block_index: int, tensor: str) -> tuple[int, ...]:
    """Indices of the top-level blocks after ``block_index`` that read ``tensor``."""
    return tuple(i for i in range(block_index + 1, len(body.blocks)) if tensor in reads(body.blocks[i]))


# ------------------------------------------------------------------------------- carried dependences


def _vars_in(node: Expr | Cond) -> set[str]:
    return {v.name for v in walk_expr(node) if isinstance(v, Var)}


def carried_vars(stmt: Assign, loops: Iterable[Loop], kind: StmtKind) -> frozenset[str]:
    """Loop variables along which iterations of one statement depend on each other (*race axes*).

    An enclosing variable absent from the target's subscript is one (reductions, accumulations, and a
    plain write that several iterations make — the last writer wins); so is any variable in a
    subscript position where a recurrence reads itself at another index (``D_{a-1}``).
    """
    lhs_vars = {name for index in stmt.target.indices for name in _vars_in(index)}
    races = {lp.var for lp in loops if lp.var not in lhs_vars}
    if kind is StmtKind.RECURRENCE:
        for ref in tensor_refs(stmt.value):
            if ref.name != stmt.target.name:
                continue
            for mine, theirs in zip(stmt.target.indices, ref.indices, strict=False):
                if mine != theirs:
                    races |= _vars_in(mine)
    return frozenset(races)


def _cross_statement_carried(block: Block, var: str, base: Path) -> bool:
    """Whether two accesses in the nest touch one written tensor at subscripts that differ, where ``var``
    could carry a value from one iteration to another.

    It cannot when every access of the tensor subscripts one dimension with ``var`` itself: iteration
    ``var = v`` then touches slice ``v`` of that dimension only, whatever the other subscripts do (the
    batch loop of a scan ``M_{b,t} = M_{b,t-1} + …`` runs its batches independently).
    """
    accesses: dict[str, list[tuple[tuple[Expr, ...], bool]]] = {}
    for _, stmt, _ in item_statements(block):
        accesses.setdefault(stmt.target.name, []).append((stmt.target.indices, True))
        for ref in stmt_reads(stmt):
            accesses.setdefault(ref.name, []).append((ref.indices, False))
    for entries in accesses.values():
        if not any(is_write for _, is_write in entries):
            continue
        subscripts = {indices for indices, _ in entries}
        if len(subscripts) > 1 and any(var in _vars_in(i) for sub in subscripts for i in sub) \
                and not separates(var, subscripts):
            return True
    return False


def separates(var: str, subscripts: Iterable[tuple[Expr, ...]]) -> bool:
    """Whether one dimension is subscripted by the bare variable ``var`` (parentheses aside) in every one
    of ``subscripts``, all of one rank: distinct values of ``var`` then address distinct elements, so a loop
    over it carries nothing through that tensor. The interpreter vectorises by it; ``loop_race_reason``
    lets the batch loops of a scan run in parallel by it."""
    rows = list(subscripts)
    rank = len(rows[0]) if rows else 0
    return any(all(len(row) == rank and _bare_name(row[d]) == var for row in rows) for d in range(rank))


def _bare_name(index: Expr) -> str | None:
    index = strip_parens(index)
    return index.name if isinstance(index, Var) else None


def loop_carries_dependence(program: Program, block_path: Path, var: str) -> bool:
    """True when the loop over ``var`` in the block at ``block_path`` must run its iterations in order.

    It does when any statement under it has ``var`` as a race axis, or when two accesses of a tensor
    written under it use different subscripts that involve ``var`` (one iteration may read what another
    writes). Conservative: ``False`` means provably safe to parallelise or vectorise.
    """
    return loop_race_reason(program, block_path, var) is not None


def _enclosing_loops(body: Body, path: Path) -> tuple[Loop, ...]:
    """Loops strictly outside the block at ``path``."""
    out: list[Loop] = []
    for depth in range(1, len(path)):
        outer = block_at(body, path[:depth])
        out.extend(outer.loops)
    return tuple(out)


# ------------------------------------------------------------------------------------ affine indices


@dataclass(frozen=True, slots=True)
class Affine:
    """``sum(coeff * var) + const`` with integer coefficients: the form most subscripts take."""

    coeffs: tuple[tuple[str, int], ...]
    const: int

    def coeff(self, var: str) -> int:
        return dict(self.coeffs).get(var, 0)

    @property
    def vars(self) -> frozenset[str]:
        return frozenset(name for name, c in self.coeffs if c)


def affine_form(expr: Expr) -> Affine | None:
    """The affine form of an index expression, or ``None`` (``//``, ``%``, gathers, products of vars)."""
    result = _affine(expr)
    if result is None:
        return None
    coeffs, const = result
    return Affine(tuple(sorted((v, c) for v, c in coeffs.items() if c)), const)


def _affine(expr: Expr) -> tuple[dict[str, int], int] | None:
    if isinstance(expr, Paren):
        return _affine(expr.inner)
    if isinstance(expr, Num):
        return ({}, int(expr.text)) if expr.is_int else None
    if isinstance(expr, Var):
        return ({expr.name: 1}, 0)
    if isinstance(expr, Neg):
        inner = _affine(expr.operand)
        return None if inner is None else ({v: -c for v, c in inner[0].items()}, -inner[1])
    if isinstance(expr, BinOp) and expr.op in "+-":
        left, right = _affine(expr.left), _affine(expr.right)
        if left is None or right is None:
            return None
        sign = 1 if expr.op == "+" else -1
        coeffs = dict(left[0])
        for v, c in right[0].items():
            coeffs[v] = coeffs.get(v, 0) + sign * c
        return coeffs, left[1] + sign * right[1]
    if isinstance(expr, BinOp) and expr.op == "*":
        left, right = _affine(expr.left), _affine(expr.right)
        if left is None or right is None:
            return None
        if not left[0]:
            return {v: c * left[1] for v, c in right[0].items()}, left[1] * right[1]
        if not right[0]:
            return {v: c * right[1] for v, c in left[0].items()}, left[1] * right[1]
    return None


# -------------------------------------------------------------------------------------- fresh names


def tensor_names_in(program: Program) -> frozenset[str]:
    """Every tensor name the program uses (signature and body)."""
    names = set(program.signature.names)
    for _, stmt, _ in statements(program.body):
        names.add(stmt.target.name)
        names.update(ref.name for ref in stmt_reads(stmt))
    return frozenset(names)


def loop_vars_in(program: Program) -> frozenset[str]:
    """Every loop variable the program binds anywhere."""
    return frozenset(lp.var for _, item, _ in iter_items(program.body) if isinstance(item, Block)
                     for lp in item.loops)


def fresh_tensor_names(program: Program, count: int = 1) -> tuple[str, ...]:
    """The next unused tensor names in the public naming sequence (``A C D … Z Aa Ac …``)."""
    return first_unused(tensor_names(), tensor_names_in(program), count)


def fresh_loop_vars(program: Program, count: int = 1, *, prefix: str = "") -> tuple[str, ...]:
    """Unused loop-variable names (skipping ``b e t v x y z``); ``prefix`` makes bound names (``tx`` …)."""
    return first_unused((prefix + name for name in loop_var_names()), loop_vars_in(program), count)


# ---- graph


def tensor_bytes(program: Program, name: str) -> int:
    """Size in bytes of a tensor (known or intermediate), from the checker's shapes: what a trace reports."""
    info = program_info(program).tensors[name]
    return tensor_nbytes(info.dtype, info.shape)


def iterations(loops: Iterable[Loop]) -> int:
    """How many times the innermost body of a loop nest runs."""
    count = 1
    for lp in loops:
        count *= lp.extent
    return count


def injective_subscript(indices: tuple[Expr, ...], loops: Iterable[Loop]) -> bool:
    """True when distinct iterations of ``loops`` provably touch distinct elements through ``indices``.

    Each dimension must be affine and mixed-radix in its own loop variables (``a*16+c`` with ``c`` under
    16), no variable in two dimensions, and every loop of extent > 1 named somewhere. Conservative:
    ``False`` only means "not proved".
    """
    extents = {lp.var: lp.extent for lp in loops}
    needed = {v for v, n in extents.items() if n > 1}
    covered: set[str] = set()
    for index in indices:
        form = affine_form(index)
        names = set(_vars_in(index)) & needed
        if form is None:
            if names:
                return False
            continue
        if names & covered:
            return False
        span = 0
        for name in sorted(names, key=lambda v: (abs(form.coeff(v)), v)):
            coeff = abs(form.coeff(name))
            if coeff <= span:
                return False
            span += coeff * (extents[name] - 1)
        covered |= names
    return needed <= covered


def _accesses(items: Iterable[Item]) -> dict[str, list[tuple[tuple[str, ...], bool, bool]]]:
    """tensor -> ``(subscript text, is_write, under a nested loop)`` for every access of ``items``."""
    from leir.printer import expr_text

    out: dict[str, list[tuple[tuple[str, ...], bool, bool]]] = {}
    for item in items:
        nested = isinstance(item, Block)
        for _, stmt, _ in item_statements(item):
            for ref, is_write in ((stmt.target, True), *((r, False) for r in stmt_reads(stmt))):
                subscript = tuple(expr_text(i) for i in ref.indices)
                out.setdefault(ref.name, []).append((subscript, is_write, nested))
    return out


def interleaving_hazards(loops: tuple[Loop, ...], first: Iterable[Item],
                         second: Iterable[Item]) -> tuple[str, ...]:
    """Why ``first`` and ``second`` under one loop nest may not change between one block and two.

    Two blocks run every iteration of ``first`` before any of ``second``; one block runs both per
    iteration. The two orders agree when no element that one part writes is touched by the other part
    in a *different* iteration. That is proved per tensor both parts touch (one of them writing): all
    its accesses are direct statements with one identical subscript that names a distinct element in
    every iteration (``injective_subscript``). Each entry of the result is a reason it is not proved.
    """
    one, two = _accesses(first), _accesses(second)
    problems: list[str] = []
    for name in sorted(set(one) & set(two)):
        entries = one[name] + two[name]
        if not any(is_write for _, is_write, _ in entries):
            continue
        subscripts = {sub for sub, _, _ in entries}
        if any(nested for _, _, nested in entries):
            problems.append(f"{name} is accessed inside a nested loop of one part")
        elif len(subscripts) > 1:
            shown = ", ".join("_{" + ",".join(s) + "}" for s in sorted(subscripts))
            problems.append(f"{name} is accessed at different subscripts ({shown})")
        else:
            (sub,) = subscripts
            parsed = _subscript_of(first, second, name)
            if not injective_subscript(parsed, loops):
                problems.append(f"{name}_{{{','.join(sub)}}} does not name a distinct element per iteration")
    return tuple(problems)


def _subscript_of(first: Iterable[Item], second: Iterable[Item], name: str) -> tuple[Expr, ...]:
    for item in (*first, *second):
        for _, stmt, _ in item_statements(item):
            if stmt.target.name == name:
                return stmt.target.indices
            for ref in stmt_reads(stmt):
                if ref.name == name:
                    return ref.indices
    raise KeyError(name)


def has_reduction(program: Program, block_path: Path) -> bool:
    """Whether any statement in the block at ``block_path`` is a reduction with implicit init."""
    info = program_info(program)
    return any(s.kind is StmtKind.REDUCE for p, s in info.statements.items()
               if p[: len(block_path)] == block_path)


def dead_blocks(blocks: tuple[Block, ...] | list[Block], live: Iterable[str], *,
                transitive: bool = True) -> frozenset[int]:
    """Indices of the blocks that write only tensors nothing later reads and that are not in ``live``.

    Walks backwards: a block writing a live tensor stays, and what it reads becomes live. Transitively
    (the frontend's use) a block read only by dead blocks is dead too, so one call finds them all; with
    ``transitive=False`` (one rewrite step) only blocks that no later block at all reads are dead.
    """
    alive = set(live)
    dead: set[int] = set()
    for index in range(len(blocks) - 1, -1, -1):
        block = blocks[index]
        if writes(block) & alive:
            alive |= reads(block)
        else:
            dead.add(index)
            if not transitive:
                alive |= reads(block)
    return frozenset(dead)


def dead_statements(program: Program) -> tuple[Path, ...]:
    """Statements of multi-item blocks writing a tensor no item reads and that is not an output.

    A statement inside a kept block is dead when its tensor is read by no statement at all (not earlier
    in its block either: the next iteration would read it) and is not a signature output.
    """
    outputs = {d.name for d in program.signature.by_role("output")}
    read_anywhere = {ref.name for _, stmt, _ in statements(program.body) for ref in stmt_reads(stmt)
                     if ref.name != stmt.target.name}
    out: list[Path] = []
    for path, item, _ in iter_items(program.body):
        if not isinstance(item, Block) or len(item.items) < 2:
            continue
        for i, sub in enumerate(item.items):
            if isinstance(sub, Assign) and sub.target.name not in outputs | read_anywhere:
                out.append(path + (i,))
    return tuple(out)


# ---- loop (helper "loop"): race reasons, spatial loops, contiguity, divisors


_RACE_REASON = {
    StmtKind.REDUCE: "carries a reduction",
    StmtKind.ACCUMULATE: "carries an accumulation",
    StmtKind.RECURRENCE: "carries a recurrence",
    StmtKind.ASSIGN: "carries a last-writer assignment",
}


def loop_race_reason(program: Program, block_path: Path, var: str,
                     info: ProgramInfo | None = None) -> str | None:
    """Why the loop over ``var`` of the block at ``block_path`` must run in order, or ``None``.

    The one rule behind ``loop_carries_dependence``, the strategies' legality checks and the lowering's
    decision to run a ``P``/``V``/``B`` loop serially (which it then reports as not honoured): a
    statement under the loop has ``var`` as a race axis (``carried_vars``: "carries a reduction",
    "… a recurrence", …), or two statements under it touch one written tensor at subscripts that
    differ along ``var`` ("carries a dependence between statements").
    """
    info = info if info is not None else program_info(program)
    block = block_at(program.body, block_path)
    outer = _enclosing_loops(program.body, block_path)
    for rel, stmt, loops in item_statements(block):
        sinfo = info.statements.get(block_path + rel)
        kind = sinfo.kind if sinfo else StmtKind.ASSIGN
        if var in carried_vars(stmt, outer + block.loops + loops, kind):
            return _RACE_REASON[kind]
    if _cross_statement_carried(block, var, block_path):
        return "carries a dependence between statements"
    return None


def spatial_loops(program: Program, block_path: Path) -> tuple[Loop, ...]:
    """The header loops of a block along which no iteration depends on another (safe to reorder freely)."""
    block = block_at(program.body, block_path)
    return tuple(lp for lp in block.loops if loop_race_reason(program, block_path, lp.var) is None)


def contiguity_problem(item: Item, var: str) -> str | None:
    """Why iterations of ``var`` do not touch consecutive elements of every tensor, or ``None``.

    Contiguous (what vector lanes need): in every reference the variable appears only in the last
    subscript, with coefficient 1 (``A_{i,a*64+c}`` along ``c``); a reference without it is a broadcast.
    A stride other than 1, the variable in an earlier subscript, a non-affine index (``//``, ``%``, a
    gather) or the variable used as a value are refused.
    """
    for _, stmt, _ in item_statements(item):
        refs = (stmt.target, *stmt_reads(stmt))
        for ref in refs:
            for pos, index in enumerate(ref.indices):
                if var not in _vars_in(index):
                    continue
                form = affine_form(index)
                if form is None:
                    return f"{ref.name} is indexed by {var} through a non-affine subscript"
                if pos != len(ref.indices) - 1:
                    return (f"{ref.name} is indexed by {var} in subscript {pos + 1} of "
                            f"{len(ref.indices)}, not the last")
                if form.coeff(var) != 1:
                    return f"{ref.name} is accessed with stride {form.coeff(var)} along {var}"
        if _value_uses_var(stmt.value, var):
            return f"{var} is used as a value, not only as an index"
    return None


def _value_uses_var(expr: Expr, var: str) -> bool:
    """Whether ``var`` occurs in an expression outside every tensor subscript."""
    stack: list[Expr | Cond] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Var) and node.name == var:
            return True
        if isinstance(node, TensorRef):
            continue
        from leir.ast import expr_children

        stack.extend(expr_children(node))
    return False


def proper_divisors(n: int) -> tuple[int, ...]:
    """The non-trivial divisors of ``n`` (``1 < f < n``), ascending: the legal split factors."""
    return tuple(f for f in range(2, n) if n % f == 0)


# Index rewriting for loop split and fusion. A sum is read as its left-associated list of signed terms
# (exactly how the parser builds ``a*512+c-1``), so splitting ``i`` in ``tx*512+i`` gives
# ``tx*512+i*4+k`` (not ``tx*512+(i*4+k)``) and fusing back gives the original text.

Term = tuple[str, Expr]
#: Rewrites the signed terms of one sum (see ``_rewrite_terms``).
TermsFn = Callable[[list[Term]], list[Term]]


def _sum_terms(expr: Expr) -> list[Term]:
    """``a-b+c`` → ``[("+", a), ("-", b), ("+", c)]``; a non-sum is one term. Right operands stay whole."""
    terms: list[Term] = []
    node = expr
    while isinstance(node, BinOp) and node.op in "+-" and len(node.op) == 1:
        terms.append((node.op, node.right))
        node = node.left
    terms.append(("+", node))
    terms.reverse()
    return terms


def _from_terms(terms: list[Term]) -> Expr:
    first_sign, first = terms[0]
    out: Expr = Neg(first) if first_sign == "-" else first
    for sign, term in terms[1:]:
        out = BinOp(sign, out, term)
    return out


def _multiple_of(term: Expr, var: str) -> int | None:
    """``c`` when the term is ``var``, ``var*c`` or ``c*var`` (an integer literal ``c``), else ``None``."""
    if isinstance(term, Var) and term.name == var:
        return 1
    if isinstance(term, BinOp) and term.op == "*":
        left, right = term.left, term.right
        if isinstance(left, Var) and left.name == var and isinstance(right, Num) and right.is_int:
            return int(right.text)
        if isinstance(right, Var) and right.name == var and isinstance(left, Num) and left.is_int:
            return int(left.text)
    return None


def _scaled(var: str, coeff: int) -> Expr:
    return Var(var) if coeff == 1 else BinOp("*", Var(var), Num(str(coeff)))


def _rewrite_terms(expr: Expr, fn: TermsFn) -> Expr:
    """Rewrite every sum (at every depth) with ``fn(terms) -> terms``; other nodes are rebuilt around it."""
    from leir.ast import expr_children
    terms = _sum_terms(expr)
    rebuilt: list[Term] = []
    for sign, term in terms:
        kids = expr_children(term)
        leaf_product = isinstance(term, BinOp) and term.op == "*" and not any(expr_children(k) for k in kids)
        if kids and not leaf_product:  # ``i*4`` is a term the sum rule reads whole
            new = _rebuild(term, tuple(_rewrite_terms(k, fn) if not isinstance(k, (Compare, Logical))
                                       else _rewrite_cond(k, fn) for k in kids))
            assert not isinstance(new, (Compare, Logical)), "rebuilding keeps the node's class"
            term = new
        rebuilt.append((sign, term))
    return _from_terms(fn(rebuilt))


def _rewrite_cond(cond: Cond, fn: TermsFn) -> Cond:
    from leir.ast import expr_children
    kids = expr_children(cond)
    return _rebuild(cond, tuple(_rewrite_cond(k, fn) if isinstance(k, (Compare, Logical))
                                else _rewrite_terms(k, fn) for k in kids))


_PLACEHOLDER = "\x00loop"


def split_index_var(expr: Expr | Cond, var: str, inner: str, factor: int) -> Expr | Cond:
    """``var → var*factor+inner`` everywhere in an expression, spliced into the sums it appears in."""
    def fn(terms: list[Term]) -> list[Term]:
        out: list[Term] = []
        for sign, term in terms:
            coeff = _multiple_of(term, var)
            if coeff is None:
                out.append((sign, term))
            else:
                out.extend([(sign, _scaled(_PLACEHOLDER, coeff * factor)), (sign, _scaled(inner, coeff))])
        return out

    result: Expr | Cond = (_rewrite_cond(expr, fn) if isinstance(expr, (Compare, Logical))
                           else _rewrite_terms(expr, fn))
    # an occurrence outside any sum term (``i*j``, ``i//2``, a value) gets the whole ``var*factor+inner``
    whole = _from_terms([("+", _scaled(_PLACEHOLDER, factor)), ("+", Var(inner))])
    result = substitute_vars(result, {var: whole})
    return substitute_vars(result, {_PLACEHOLDER: Var(var)})


def fuse_index_vars(expr: Expr | Cond, outer: str, inner: str, inner_extent: int) -> Expr | Cond:
    """``outer*n+inner → outer`` (the fused loop keeps the outer name); other uses get ``//n`` and ``%n``."""
    def fn(terms: list[Term]) -> list[Term]:
        outs = [(k, s, _multiple_of(t, outer)) for k, (s, t) in enumerate(terms)]
        ins = [(k, s, _multiple_of(t, inner)) for k, (s, t) in enumerate(terms)]
        for ko, so, co in outs:
            if co is None:
                continue
            for ki, si, ci in ins:
                if ci is not None and si == so and co == ci * inner_extent:
                    merged = list(terms)
                    merged[ko] = (so, _scaled(_PLACEHOLDER, ci))
                    del merged[ki]
                    return merged
        return terms

    result: Expr | Cond = (_rewrite_cond(expr, fn) if isinstance(expr, (Compare, Logical))
                           else _rewrite_terms(expr, fn))
    result = substitute_vars(result, {outer: BinOp("//", Var(_PLACEHOLDER), Num(str(inner_extent))),
                                      inner: BinOp("%", Var(_PLACEHOLDER), Num(str(inner_extent)))})
    return substitute_vars(result, {_PLACEHOLDER: Var(outer)})



@dataclass(frozen=True, slots=True)
class CarriedStatement:
    """One statement under a block, with the loop variables its iterations depend along."""

    path: Path
    stmt: Assign
    kind: StmtKind
    carried: frozenset[str]
    reduce_vars: tuple[str, ...]


def carried_statements(program: Program, block_path: Path) -> tuple[CarriedStatement, ...]:
    """Every statement under the block at ``block_path`` with its race axes (``carried_vars``)."""
    info = program_info(program)
    block = block_at(program.body, block_path)
    outer = _enclosing_loops(program.body, block_path)
    out = []
    for rel, stmt, loops in item_statements(block):
        sinfo = info.statements.get(block_path + rel)
        kind = sinfo.kind if sinfo else StmtKind.ASSIGN
        out.append(CarriedStatement(block_path + rel, stmt, kind,
                                    carried_vars(stmt, outer + block.loops + loops, kind),
                                    sinfo.reduce_vars if sinfo else ()))
    return tuple(out)


def shared_tensor_vars(block: Block) -> frozenset[str]:
    """Loop variables in the subscripts of a tensor that two statements of the block access differently.

    Such a tensor carries values from one iteration of one statement to another iteration of the other
    (``X_{i}`` written, ``X_{i+1}`` read), so loops over these variables must keep their order.
    """
    accesses: dict[str, list[tuple[int, tuple[Expr, ...], bool]]] = {}
    for n, (_, stmt, _) in enumerate(item_statements(block)):
        accesses.setdefault(stmt.target.name, []).append((n, stmt.target.indices, True))
        for ref in stmt_reads(stmt):
            accesses.setdefault(ref.name, []).append((n, ref.indices, False))
    out: set[str] = set()
    for entries in accesses.values():
        if not any(w for _, _, w in entries) or len({n for n, _, _ in entries}) < 2:
            continue
        if len({idx for _, idx, _ in entries}) > 1:
            out |= {v for _, idx, _ in entries for i in idx for v in _vars_in(i)}
    return frozenset(out)


def var_in_condition(item: Item, var: str) -> bool:
    """Whether a condition of the item (``if_then_else(2<=c<258, …)``) mentions ``var``.

    Guarded reads (padding, ``a-1<0`` recurrences) are proved in bounds from the guard on the plain
    variable; a loop rewrite that turns ``c`` into ``c*2+k`` or ``c//4`` inside the guard leaves that
    proof to an interval analysis that cannot narrow it, so split and fusion keep away from such loops.
    """
    for _, stmt, _ in item_statements(item):
        for node in walk_expr(stmt.value):
            if isinstance(node, (Compare, Logical)) and var in _vars_in(node):
                return True
    return False


# ---- memory
#
# What the memory-level strategies (cache_read_write, layout_transformation, set_storage_scope,
# set_storage_layout, precompute_indices) ask of a program: the split of an affine subscript into the
# part fixed by outer loops and the part the inner loops sweep (the *region* a cache must hold), the
# top-level blocks a tensor lives in, and whether an intermediate may move to on-chip memory under the
# lowering's cuda rules (one kernel per top-level block, one copy per block or thread, no whole-tensor
# fill inside a kernel).



def loop_ranges(loops: Iterable[Loop]) -> dict[str, tuple[int, int]]:
    """``{var: (0, extent-1)}`` for interval reasoning over a loop nest."""
    return {lp.var: (0, lp.extent - 1) for lp in loops}


def affine_parts(form: Affine, inner: frozenset[str]) -> tuple[Affine, Affine]:
    """``form`` as ``outer + inner``: the terms over ``inner`` variables, and the rest with the constant."""
    outer = Affine(tuple((v, c) for v, c in form.coeffs if v not in inner), form.const)
    swept = Affine(tuple((v, c) for v, c in form.coeffs if v in inner), 0)
    return outer, swept


def affine_bounds(form: Affine, extents: dict[str, int]) -> tuple[int, int]:
    """Smallest and largest value of an affine form when every variable runs over ``0..extent-1``."""
    lo = hi = form.const
    for var, coeff in form.coeffs:
        top = coeff * (extents[var] - 1)
        lo, hi = lo + min(0, top), hi + max(0, top)
    return lo, hi


def affine_expr(form: Affine, order: Iterable[str] = ()) -> Expr:
    """An index expression for an affine form, variables in ``order`` (loop order) first."""
    from leir.builders import iadd, imul, isub, lit

    coeffs = dict(form.coeffs)
    ranked = [v for v in order if v in coeffs] + sorted(v for v in coeffs if v not in set(order))
    out: Expr | None = None
    for name in ranked:
        coeff = coeffs[name]
        term = imul(Var(name), abs(coeff))
        if out is None:
            out = term if coeff > 0 else imul(Var(name), coeff)
        else:
            out = iadd(out, term) if coeff > 0 else isub(out, term)
    if out is None:
        return lit(form.const)
    return iadd(out, form.const)


def top_level_owners(body: Body, tensor: str) -> tuple[int, ...]:
    """Indices of the top-level blocks that read or write ``tensor`` (a cuda kernel each)."""
    return tuple(i for i, block in enumerate(body.blocks)
                 if tensor in reads(block) or tensor in writes(block))


def tensor_refs_in(body: Body, tensor: str) -> Iterator[tuple[Path, TensorRef, tuple[Loop, ...]]]:
    """``(statement path, reference, loops)`` for every reference to ``tensor``, targets included."""
    for path, stmt, loops in statements(body):
        for ref in (stmt.target, *stmt_reads(stmt)):
            if ref.name == tensor:
                yield path, ref, loops


def bound_axis(var: str) -> str:
    """``blockIdx.y`` / ``threadIdx.x`` for a ``B`` loop variable (the lowering's naming rule)."""
    if len(var) >= 2 and var[0] in "bt" and var[1] in "xyz":
        return ("blockIdx." if var[0] == "b" else "threadIdx.") + var[1]
    return "threadIdx.x"


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a dense row-major tensor (the layout every LEIR buffer has)."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return tuple(strides)


def stride_along(indices: tuple[Expr, ...], shape: tuple[int, ...], var: str) -> int | None:
    """How many elements a reference moves when ``var`` grows by one (``None``: not affine in it)."""
    total = 0
    for index, stride in zip(indices, row_major_strides(shape), strict=True):
        form = affine_form(index)
        if form is None:
            if var in _vars_in(index):
                return None
            continue
        total += form.coeff(var) * stride
    return total


def _plain_vars(ref: TensorRef) -> dict[int, str]:
    from leir.ast import strip_parens

    return {d: e.name for d, index in enumerate(ref.indices) if isinstance(e := strip_parens(index), Var)}


def onchip_scope_problem(program: Program, tensor: str, scope: str) -> str | None:
    """Why the intermediate ``tensor`` cannot live in ``scope`` (``s``/``l``) on cuda, or ``None``.

    The lowering's rules (``verifier.lowering``): an on-chip tensor is allocated inside one kernel, so it
    is used by exactly one top-level block; it cannot be filled as a whole there, so its first reference
    must be a plain covering write or a covering reduction with an exact ``T.init``; and it has one copy per
    block (``s``) or per thread (``l``). So that those copies compute what one global tensor would, every
    ``B`` loop around its references must index it, at one fixed dimension, by exactly that loop's
    variable: each block or thread then touches only its own slice and no copy reads another's writes.
    Shared tensors of one kernel must fit the per-block shared memory.
    """
    info = program_info(program)
    tinfo = info.tensors.get(tensor)
    if tinfo is None or tinfo.is_known:
        return f"{tensor} is not an intermediate"
    owners = top_level_owners(program.body, tensor)
    if len(owners) != 1:
        blocks = ", ".join(str(i + 1) for i in owners)
        return f"{tensor} is used by top-level blocks {blocks}; on-chip memory does not outlive a kernel"
    refs = list(tensor_refs_in(program.body, tensor))
    first_path, _, _ = refs[0]
    first = statement_at(program.body, first_path)
    problem = _first_write_problem(program, info, tensor, first_path, first, refs)
    if problem:
        return problem
    header = program.body.blocks[owners[0]].loops
    leading = header[:next((k for k, lp in enumerate(header) if lp.kind != "B"), len(header))]
    stray = sorted({lp.var for _, _, loops in refs for lp in loops if lp.kind == "B" and lp not in leading})
    if stray:
        return (f"the loop over {stray[0]} is bound to the GPU but does not lead its top-level block, so "
                f"the kernel's on-chip allocation cannot sit inside it")
    bound_problem = _bound_loops_problem(program, tensor, scope)
    if bound_problem:
        return bound_problem
    if scope == "s":
        owner = program.body.blocks[owners[0]]
        shared = {name for name in reads(owner) | writes(owner)
                  if name == tensor or (info.tensors[name].scope == "s" and not info.tensors[name].is_known)}
        size = sum(tensor_nbytes(info.tensors[n].dtype, info.tensors[n].shape) for n in shared)
        if size > MAX_SHARED_BYTES:
            return f"shared tensors {', '.join(sorted(shared))} would need {size} bytes per block " \
                   f"(the limit is {MAX_SHARED_BYTES})"
    return None


def _bound_loops_problem(program: Program, tensor: str, scope: str) -> str | None:
    """Why some ``B`` loop around ``tensor``'s references does not index it at one fixed dimension."""
    refs = list(tensor_refs_in(program.body, tensor))
    bound: list[Loop] = []
    for _, _, loops in refs:
        bound.extend(lp for lp in loops if lp.kind == "B" and lp not in bound)
    copies = {"s": "shared copies (one per block)", "l": "local copies (one per thread)",
              "g": "one global tensor written by every GPU thread at once"}[scope]
    for lp in bound:
        dims: set[int] | None = None
        for _, ref, _ in refs:
            here = {d for d, name in _plain_vars(ref).items() if name == lp.var}
            dims = here if dims is None else dims & here
        if not dims:
            return (f"{tensor} is not indexed by {lp.var} at one fixed dimension in every reference; as "
                    f"{copies} it would not compute what the program means")
    return None


def global_scope_problem(program: Program, tensor: str) -> str | None:
    """Why an on-chip intermediate cannot move back to global memory on cuda, or ``None``.

    An ``l`` buffer private to each thread may leave out the thread's index; in one global tensor the
    threads would then race on the same elements (the lowering refuses that statement).
    """
    return _bound_loops_problem(program, tensor, "g")


def _covering(target: TensorRef, loops: tuple[Loop, ...], shape: tuple[int, ...]) -> bool:
    """The target's subscript is distinct plain loop variables whose extents are the tensor's dimensions."""
    plain = _plain_vars(target)
    if len(plain) != len(target.indices) or len(set(plain.values())) != len(plain):
        return False
    extents = {lp.var: lp.extent for lp in loops}
    return all(extents.get(plain[d]) == n for d, n in enumerate(shape))


def _first_write_problem(program: Program, info: ProgramInfo, tensor: str, path: Path, first: Assign,
                         refs: list[tuple[Path, TensorRef, tuple[Loop, ...]]]) -> str | None:
    shape = info.tensors[tensor].shape
    loops = refs[0][2]
    if first.target.name != tensor:
        return f"{tensor} is read before it is written; an on-chip copy would start uninitialised"
    sinfo = info.statements.get(path)
    kind = sinfo.kind if sinfo else StmtKind.ASSIGN
    if not _covering(first.target, loops, shape):
        return f"the first write of {tensor} does not cover the whole tensor with plain loop variables, " \
               "so the lowering would have to fill it inside the kernel"
    if kind is StmtKind.ASSIGN and any(r.name == tensor for r in stmt_reads(first)):
        return f"the first write of {tensor} reads {tensor} itself"
    if kind not in (StmtKind.ASSIGN, StmtKind.REDUCE):
        return f"the first write of {tensor} is a {kind.value}, which needs a prior value"
    for other_path, stmt, _ in statements(program.body):
        other = info.statements.get(other_path)
        if other is None or other.kind is not StmtKind.REDUCE or stmt.target.name != tensor:
            continue
        if other_path != path or any(p[0] == path[0] and p < path for p, _, _ in refs):
            return f"a reduction into {tensor} after another reference needs a whole-tensor init fill"
    return None
