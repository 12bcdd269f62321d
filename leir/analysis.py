"""Program analyses shared by the strategies, the interpreter and the lowering — one implementation each.

Every legality rule of the strategy catalogue comes down to a few questions: what does an item read and
write, which earlier item must stay before which later one (flow, anti and output dependences), which
loops carry a dependence (reduction and recurrence axes, last-writer races), which items produce or
consume a tensor, and how an index depends on the loop variables. They are answered here, from the
syntax tree and the checker's ``ProgramInfo``, so no strategy re-derives them its own way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from leir.ast import (
    Assign,
    BinOp,
    Block,
    Body,
    Cond,
    Expr,
    Item,
    Loop,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
    iter_items,
    statements,
    tensor_refs,
    walk_expr,
)
from leir.checker import check
from leir.names import loop_var_names, tensor_names
from leir.semantics import ProgramInfo, StmtKind

Path = tuple[int, ...]


# ----------------------------------------------------------------------------------- the checker once


@lru_cache(maxsize=256)
def program_info(program: Program) -> ProgramInfo:
    """The checker's reading of a program, memoised: strategies ask for it many times per state."""
    return check(program)


# -------------------------------------------------------------------------------- read and write sets


def stmt_reads(stmt: Assign) -> tuple[TensorRef, ...]:
    """Every tensor reference a statement reads: its value, and index tensors of its target (gathers)."""
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
    """Whether two statements in the nest touch one tensor at subscripts that differ along ``var``."""
    accesses: dict[str, list[tuple[tuple[Expr, ...], bool]]] = {}
    for _, stmt, _ in item_statements(block):
        accesses.setdefault(stmt.target.name, []).append((stmt.target.indices, True))
        for ref in stmt_reads(stmt):
            accesses.setdefault(ref.name, []).append((ref.indices, False))
    for entries in accesses.values():
        if not any(is_write for _, is_write in entries):
            continue
        subscripts = {indices for indices, _ in entries}
        if len(subscripts) > 1 and any(var in _vars_in(i) for sub in subscripts for i in sub):
            return True
    return False


def loop_carries_dependence(program: Program, block_path: Path, var: str) -> bool:
    """True when the loop over ``var`` in the block at ``block_path`` must run its iterations in order.

    It does when any statement under it has ``var`` as a race axis, or when two accesses of a tensor
    written under it use different subscripts that involve ``var`` (one iteration may read what another
    writes). Conservative: ``False`` means provably safe to parallelise or vectorise.
    """
    info = program_info(program)
    from leir.rewrite import item_at

    block = item_at(program.body, block_path)
    assert isinstance(block, Block)
    for rel, stmt, loops in item_statements(block):
        path = block_path + rel
        sinfo = info.statements.get(path)
        kind = sinfo.kind if sinfo else StmtKind.ASSIGN
        all_loops = _enclosing_loops(program.body, block_path) + block.loops + loops
        if var in carried_vars(stmt, all_loops, kind):
            return True
    return _cross_statement_carried(block, var, block_path)


def _enclosing_loops(body: Body, path: Path) -> tuple[Loop, ...]:
    """Loops strictly outside the block at ``path``."""
    from leir.rewrite import item_at

    out: list[Loop] = []
    for depth in range(1, len(path)):
        outer = item_at(body, path[:depth])
        assert isinstance(outer, Block)
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
    if count == 0:
        return ()
    taken = tensor_names_in(program)
    out: list[str] = []
    for name in tensor_names():
        if name not in taken:
            out.append(name)
            if len(out) == count:
                return tuple(out)
    raise RuntimeError("tensor names exhausted")


def fresh_loop_vars(program: Program, count: int = 1, *, prefix: str = "") -> tuple[str, ...]:
    """Unused loop-variable names (skipping ``b e t v x y z``); ``prefix`` makes bound names (``tx`` …)."""
    if count == 0:
        return ()
    taken = loop_vars_in(program)
    out: list[str] = []
    for name in loop_var_names():
        candidate = prefix + name
        if candidate not in taken:
            out.append(candidate)
            if len(out) == count:
                return tuple(out)
    raise RuntimeError("loop variable names exhausted")


# ---- memory
#
# What the memory-level strategies (cache_read_write, layout_transformation, set_storage_scope,
# set_storage_layout, precompute_indices) ask of a program: the split of an affine subscript into the
# part fixed by outer loops and the part the inner loops sweep (the *region* a cache must hold), the
# top-level blocks a tensor lives in, and whether an intermediate may move to on-chip memory under the
# lowering's cuda rules (one kernel per top-level block, one copy per block or thread, no whole-tensor
# fill inside a kernel).

#: Bytes per element as the hardware stores it (``bf16`` is 2 bytes even though NumPy computes in f32).
DTYPE_BYTES: dict[str, int] = {
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
    "u8": 1, "u16": 2, "u32": 4, "u64": 8, "bool": 1,
}
#: Static shared memory per CUDA block (the lowering's ``GpuLimitError`` threshold, ``verifier.targets``).
MAX_SHARED_BYTES = 48 * 1024


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
    first = item_at_path(program.body, first_path)
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
        size = sum(DTYPE_BYTES[info.tensors[n].dtype] * _numel(info.tensors[n].shape) for n in shared)
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


def _numel(shape: tuple[int, ...]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def item_at_path(body: Body, path: Path) -> Assign:
    """The statement at ``path``."""
    from leir.rewrite import item_at

    item = item_at(body, path)
    assert isinstance(item, Assign)
    return item


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
