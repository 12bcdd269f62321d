"""The NumPy reference interpreter: LEIR's semantics, executed directly.

This is the second, independent implementation of the language (the TVM lowering is the first), so the
lowering can be differentially tested against it. Correctness comes first; speed only has to be good
enough for small instances of every corpus pattern.

Semantics implemented (LEIR.md sections 4–6 plus the project's decisions in docs/leir.md):

* Blocks run in order; loops iterate ``0..extent-1`` in header order whatever their kind; a block's items
  run in order in every iteration of its innermost loop; nested blocks' loops nest inside.
* Arithmetic in a statement runs in the LHS dtype: every tensor value, literal and loop-variable value is
  converted to it first. Comparisons compare in the promoted type of their two operands (a float if either
  is a float; literals adopt the other side's type). Integer ``/`` and ``//`` are floor division and ``%`` is
  floor modulo; index expressions are i64.
* A REDUCE statement's tensor is set to its init (``+ -`` → 0, ``*`` → 1, ``max`` → the dtype's minimum,
  ``min`` → its maximum) right before the top-level block that contains it; ACCUMULATE and RECURRENCE
  statements read whatever is stored; elements nothing writes are 0.
* ``if_then_else`` is lazy: each branch is evaluated only where it is taken (guarded reads such as
  ``X_{a-1}`` under ``a-1<0`` never touch index -1). Any index that is out of bounds where it *is* evaluated
  (only possible through a gather) raises ``InterpreterError``.
* A read annotated with a dtype other than the tensor's storage (the public corpus has ``O^{i32,g}`` for a
  tensor written as f64) converts the stored value to the annotated dtype, then to the statement's dtype.
* ``f16`` computes in float16. ``bf16``, ``f8e4m3`` and ``f8e5m2`` are emulated: float32 arithmetic, rounded
  to the type (nearest, ties to even; ``leir.dtypes.cast_to``) on every store. ``bool`` statements compute
  in i64 and store ``value != 0``. Integer overflow wraps.
  ``erf`` uses ``math.erf`` in double precision, then converts; ``sin``/``cos`` use NumPy's.

How it runs: each block is executed *vectorised* over the loops whose iterations provably touch disjoint
elements of everything the block writes (a loop variable that appears bare at the same position in every
access of every written tensor), and *sequentially* over the others — recurrences (``a`` vs ``a-1``),
statements that read what another statement of the block writes at another subscript, and self-updating
statements that are not a pure reduction. A pure reduction ``X=X⊕rest`` (the only writer and the only
reader of X in its top-level block) is executed with NumPy's unbuffered ``ufunc.at`` scatter, in iteration
order, so it never forces sequential loops. Vectorised iterations are laid out outer-loop-major, so a
reduction combines in exactly the header order when no sequential loop sits inside a vectorised one;
when one does (``L i L k`` with ``k`` carrying a recurrence), its updates are held back with their
iteration's rank and applied sorted at the end of the top-level block (``_Machine._scatter``).

Edge values (docs/leir.md §6): NumPy's ``maximum``/``minimum`` propagate NaN, ``floor_divide``/``mod`` are
the float ``//`` and ``%``; integer division by zero gives 0; float → int conversion saturates
(``leir.dtypes.float_to_int``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from leir.analysis import separates
from leir.ast import (
    Assign,
    BinOp,
    Block,
    Call,
    Compare,
    Expr,
    IfThenElse,
    Inf,
    Logical,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
    statements,
    strip_parens,
    tensor_refs,
)
from leir.checker import require_valid
from leir.dtypes import (
    cast_to,
    float_to_int,
    is_bool,
    is_emulated,
    max_value,
    min_value,
    numpy_dtype,
)
from leir.errors import LeirCheckError, LeirError
from leir.limits import statement_executions
from leir.promotion import concrete, natural_type, promote
from leir.rewrite import statement_at
from leir.semantics import ProgramInfo, StmtKind

__all__ = ["run", "InterpreterError", "MAX_EXECUTIONS", "check_budget"]


class InterpreterError(LeirError):
    """A valid program that cannot run on these inputs (missing input, wrong shape, gather out of range)."""


#: Largest tensor (in elements) the interpreter allocates; it is meant for small instances.
MAX_ELEMENTS = 1 << 28
#: Most loop iterations evaluated as one NumPy batch (each live temporary is one array of this length).
MAX_LANES = 1 << 20
#: Most statement executions one run may ask for (``leir.limits.statement_executions``): about 2–15
#: minutes at the vectorised pace of 0.1–0.75 µs per execution. Extents within the checker's limit can
#: still nest to 10^12 executions, which no one waits for; the run is refused before anything is allocated.
MAX_EXECUTIONS = 1 << 30
#: Sequential loops whose extents sum to more than this are iterated lazily (``itertools.product`` holds
#: every range it is given as a tuple: 36 GB for an extent of 10^9).
_EAGER_PRODUCT = 1 << 16

_UFUNCS = {"+": np.add, "-": np.subtract, "*": np.multiply, "max": np.maximum, "min": np.minimum}
_erf = np.frompyfunc(math.erf, 1, 1)


def _compute_dtype(dtype: str) -> np.dtype:
    """NumPy dtype arithmetic of a ``dtype`` statement runs in (bool statements compute in i64)."""
    return np.dtype(np.int64) if is_bool(dtype) else numpy_dtype(dtype)


def _convert(values: np.ndarray, cdt: np.dtype) -> np.ndarray:
    """Convert values to a compute dtype like a cast (float → int truncates, infinities saturate)."""
    if values.dtype == cdt:
        return values
    if cdt.kind in "iu" and values.dtype.kind == "f":
        return float_to_int(values, cdt)
    return values.astype(cdt)


# ---------------------------------------------------------------------------------------------- lanes


class _Lanes:
    """A batch of iterations evaluated together: one int64 array per loop variable in scope.

    ``vector`` names the loops (extent > 1) whose values vary across the lanes, outermost first; the lanes
    are laid out in lexicographic order of those loops.
    """

    __slots__ = ("env", "n", "vector")

    def __init__(self, env: dict[str, np.ndarray], n: int, vector: tuple[str, ...] = ()) -> None:
        self.env = env
        self.n = n
        self.vector = vector

    def subset(self, where: np.ndarray) -> _Lanes:
        return _Lanes({k: v[where] for k, v in self.env.items()}, int(where.shape[0]), self.vector)


# ---------------------------------------------------------------------------------------------- plans


def _subtree_statements(block: Block):
    for item in block.items:
        if isinstance(item, Assign):
            yield item
        else:
            yield from _subtree_statements(item)


def _stmt_refs(stmt: Assign) -> list[TensorRef]:
    refs = [stmt.target]
    for idx in stmt.target.indices:
        refs.extend(tensor_refs(idx))
    refs.extend(tensor_refs(stmt.value))
    return refs


def _fast_reductions(block: Block) -> dict[int, tuple[str, Expr]]:
    """Statements of a top-level block that can run as an unbuffered scatter ``X ⊕= rest``.

    Eligible: the only writer of X in the block, X appears in it only as the combiner operand at the LHS
    subscript, nothing else in the block reads X, and X is stored in a dtype whose NumPy ufunc does the
    language's arithmetic (not bf16/fp8, which must round every store, and not bool).
    """
    from leir.checker import _combiner

    stmts = list(_subtree_statements(block))
    writers: dict[str, list[Assign]] = {}
    readers: dict[str, set[int]] = {}
    for s in stmts:
        writers.setdefault(s.target.name, []).append(s)
        for ref in _stmt_refs(s)[1:]:
            readers.setdefault(ref.name, set()).add(id(s))
    fast: dict[int, tuple[str, Expr]] = {}
    for name, ws in writers.items():
        if len(ws) != 1:
            continue
        s = ws[0]
        if is_emulated(s.target.dtype) or is_bool(s.target.dtype) or readers.get(name, set()) - {id(s)}:
            continue
        comb = _combiner(s.value, s.target)
        if comb is None:
            continue
        self_refs = [r for r in _stmt_refs(s)[1:] if r.name == name]
        if len(self_refs) != 1 or self_refs[0].dtype != s.target.dtype:
            continue
        top = strip_parens(s.value)
        if isinstance(top, BinOp):
            left_is_self = strip_parens(top.left) is self_refs[0]
            rest = top.right if left_is_self else top.left
        else:
            rest = top.args[1] if strip_parens(top.args[0]) is self_refs[0] else top.args[0]
        fast[id(s)] = (comb, rest)
    return fast


def _statement_loops(block: Block, outer: tuple = ()) -> dict[int, tuple]:
    """Every statement of a top-level block (by id) with all the loops around it, outermost first."""
    loops = outer + tuple(block.loops)
    out: dict[int, tuple] = {}
    for item in block.items:
        if isinstance(item, Assign):
            out[id(item)] = loops
        else:
            out.update(_statement_loops(item, loops))
    return out


def _vector_loops(block: Block, fast: Mapping[int, object]) -> frozenset[str]:
    """Loop variables of ``block``'s header whose iterations never touch the same written element."""
    accesses: dict[str, list[TensorRef]] = {}
    written: set[str] = set()
    for s in _subtree_statements(block):
        if id(s) not in fast:
            written.add(s.target.name)
        for ref in _stmt_refs(s):
            accesses.setdefault(ref.name, []).append(ref)
    vector = set()
    for loop in block.loops:
        # a single iteration cannot conflict with another
        if loop.extent == 1 or all(separates(loop.var, [r.indices for r in accesses[name]])
                                   for name in written):
            vector.add(loop.var)
    return frozenset(vector)


@dataclass
class _BlockPlan:
    vector: frozenset[str]


# ------------------------------------------------------------------------------------------- machine


class _Machine:
    def __init__(
        self, program: Program, info: ProgramInfo, store: dict[str, np.ndarray], vectorise: bool = True
    ) -> None:
        self.vectorise = vectorise
        self.program = program
        self.info = info
        self.store = store
        self.plans: dict[int, _BlockPlan] = {}
        self.fast: dict[int, tuple[str, Expr]] = {}
        #: loops around every statement of the current top-level block
        self.loops: dict[int, tuple] = {}
        #: scatter updates held back until the end of the top-level block (see ``_scatter``)
        self.pending: dict[tuple[str, str], list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.in_order: dict[tuple[int, tuple[str, ...]], bool] = {}
        #: REDUCE statements by top-level block: their tensors are set to the init before that block
        self.reductions: dict[int, list] = {}
        for path, st in info.statements.items():
            if st.kind is StmtKind.REDUCE and st.combiner is not None:
                self.reductions.setdefault(path[0], []).append((path, st))

    # -- driving ------------------------------------------------------------------------------------
    def run(self) -> None:
        for b_index, block in enumerate(self.program.body.blocks):
            self.fast = _fast_reductions(block) if self.vectorise else {}
            self.loops = _statement_loops(block)
            self._init_reductions(b_index)
            self._block(block, _Lanes({}, 1))
            self._flush_scatters()

    def _init_reductions(self, b_index: int) -> None:
        for path, st in self.reductions.get(b_index, ()):
            stmt = statement_at(self.program.body, path)
            t = self.info.tensors[stmt.target.name]
            if st.combiner in ("+", "-"):
                value: float | int = 0
            elif st.combiner == "*":
                value = 1
            elif st.combiner == "max":
                value = min_value(t.dtype)
            else:
                value = max_value(t.dtype)
            arr = self.store[t.name]
            arr[...] = cast_to(np.array(value), t.dtype)

    def _plan(self, block: Block) -> _BlockPlan:
        plan = self.plans.get(id(block))
        if plan is None:
            plan = _BlockPlan(_vector_loops(block, self.fast) if self.vectorise else frozenset())
            self.plans[id(block)] = plan
        return plan

    def _block(self, block: Block, lanes: _Lanes) -> None:
        plan = self._plan(block)
        vec = [lp for lp in block.loops if lp.var in plan.vector]
        inner = math.prod(lp.extent for lp in vec)
        # bound memory: serialise the outermost vectorised loops (always allowed: serial order is the
        # language's own order) until one batch fits
        while vec and lanes.n * inner > MAX_LANES:
            inner //= vec.pop(0).extent
        chosen = {lp.var for lp in vec}
        seq = [lp for lp in block.loops if lp.var not in chosen]
        # expand the lanes over the vectorised loops: outer lanes major, then header order
        n = lanes.n * inner
        env = {k: np.repeat(v, inner) for k, v in lanes.env.items()}
        if vec:
            grids = np.indices([lp.extent for lp in vec], dtype=np.int64).reshape(len(vec), -1)
            for lp, grid in zip(vec, grids, strict=True):
                env[lp.var] = np.tile(grid, lanes.n)
        vector = lanes.vector + tuple(lp.var for lp in vec if lp.extent > 1)
        for values in _iterations([lp.extent for lp in seq]):
            for lp, v in zip(seq, values, strict=True):
                env[lp.var] = np.full(n, v, dtype=np.int64)
            current = _Lanes(dict(env), n, vector)
            for item in block.items:
                if isinstance(item, Assign):
                    self._assign(item, current)
                else:
                    self._block(item, current)

    # -- statements ---------------------------------------------------------------------------------
    def _assign(self, stmt: Assign, lanes: _Lanes) -> None:
        target = stmt.target
        dtype = self.info.tensors[target.name].dtype
        arr = self.store[target.name]
        idx = self._indices(target, lanes)
        fast = self.fast.get(id(stmt))
        cdt = _compute_dtype(target.dtype)
        if fast is not None:
            comb, rest = fast
            vals = self._value(rest, lanes, target.dtype, cdt).astype(arr.dtype, copy=False)
            lin = np.ravel_multi_index(idx, arr.shape) if idx else np.zeros(lanes.n, dtype=np.int64)
            self._scatter(stmt, lanes, comb, lin, vals)
            return
        vals = cast_to(self._value(stmt.value, lanes, target.dtype, cdt), dtype)
        if idx:
            arr[idx] = vals
        else:
            arr[()] = vals[-1]

    def _scatter(self, stmt: Assign, lanes: _Lanes, comb: str, lin: np.ndarray, vals: np.ndarray) -> None:
        """Apply a pure reduction's updates in the language's order: header order of its loops.

        One call combines its lanes in lexicographic order of the vectorised loops, and successive calls
        follow the sequential loops. That is header order only when no sequential loop sits inside a
        vectorised one; otherwise (``L i L k`` with ``i`` vectorised, ``k`` carried by a recurrence) the
        updates are held back with their iteration's rank and applied sorted at the end of the top-level
        block — exact, since nothing else in that block reads or writes the tensor.
        """
        loops = [lp for lp in self.loops[id(stmt)] if lp.extent > 1]
        key = (id(stmt), lanes.vector)
        ordered = self.in_order.get(key)
        if ordered is None:
            seen_vector = False
            ordered = True
            for lp in loops:
                if lp.var in lanes.vector:
                    seen_vector = True
                elif seen_vector:
                    ordered = False
            self.in_order[key] = ordered
        if ordered:
            _UFUNCS[comb].at(self.store[stmt.target.name].reshape(-1), lin, vals)
            return
        rank = np.ravel_multi_index([lanes.env[lp.var] for lp in loops], [lp.extent for lp in loops])
        # a pure reduction is the only writer of its tensor in the block: one entry per tensor
        self.pending.setdefault((stmt.target.name, comb), []).append((rank, lin, vals))

    def _flush_scatters(self) -> None:
        for (name, comb), parts in self.pending.items():
            order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
            lin = np.concatenate([p[1] for p in parts])[order]
            vals = np.concatenate([p[2] for p in parts])[order]
            _UFUNCS[comb].at(self.store[name].reshape(-1), lin, vals)
        self.pending = {}

    def _indices(self, ref: TensorRef, lanes: _Lanes) -> tuple[np.ndarray, ...]:
        shape = self.store[ref.name].shape
        out = []
        for d, expr in enumerate(ref.indices):
            idx = self._value(expr, lanes, "i64", np.dtype(np.int64))
            # a bare loop variable or literal was proved in range by the checker; anything else (gathers
            # above all) is checked here, since NumPy would silently wrap a negative index
            if type(expr) is Var or type(expr) is Num:
                out.append(idx)
                continue
            if idx.size and (idx.min() < 0 or idx.max() >= shape[d]):
                bad = int(idx[(idx < 0) | (idx >= shape[d])][0])
                raise InterpreterError(
                    f"index {d} of {ref.name} evaluates to {bad}, outside its size {shape[d]}"
                )
            out.append(idx)
        return tuple(out)

    def _read(self, ref: TensorRef, lanes: _Lanes) -> np.ndarray:
        arr = self.store[ref.name]
        idx = self._indices(ref, lanes)
        vals = arr[idx] if idx else np.repeat(arr.reshape(1), lanes.n)
        stored = self.info.tensors[ref.name].dtype
        if ref.dtype != stored:  # a cast read: the annotation is the type the value is read as
            vals = cast_to(vals, ref.dtype)
        return vals

    # -- expressions --------------------------------------------------------------------------------
    def _value(self, expr, lanes: _Lanes, dtype: str, cdt: np.dtype) -> np.ndarray:
        kind = type(expr)
        n = lanes.n
        if kind is TensorRef:
            return _convert(self._read(expr, lanes), cdt)
        if kind is Var:
            return _convert(lanes.env[expr.name], cdt)
        if kind is Num:
            if cdt.kind == "f":
                return np.full(n, float(expr.text), dtype=cdt)
            if not expr.is_int:  # a float literal converts like any float: truncate, saturate
                return np.full(n, float_to_int(np.array(float(expr.text)), cdt), dtype=cdt)
            value = (int(expr.text) + 2**63) % 2**64 - 2**63  # wrap like an i64 literal, never OverflowError
            return np.full(n, value, dtype=np.int64).astype(cdt)
        if kind is Inf:
            if cdt.kind == "f":
                return np.full(n, np.inf, dtype=cdt)
            return np.full(n, np.iinfo(cdt).max, dtype=cdt)
        if kind is Paren:
            return self._value(expr.inner, lanes, dtype, cdt)
        if kind is Neg:
            inner = strip_parens(expr.operand)
            if cdt.kind in "iu" and isinstance(inner, Inf):
                return np.full(n, np.iinfo(cdt).min, dtype=cdt)
            if cdt.kind in "iu" and isinstance(inner, Num) and not inner.is_int:
                # a negative float literal converts as one value (-2.5 in u8 saturates to 0)
                return np.full(n, float_to_int(np.array(-float(inner.text)), cdt), dtype=cdt)
            return np.negative(self._value(expr.operand, lanes, dtype, cdt))
        if kind is BinOp:
            left = self._value(expr.left, lanes, dtype, cdt)
            right = self._value(expr.right, lanes, dtype, cdt)
            return _binop(expr.op, left, right, cdt)
        if kind is Call:
            args = [self._value(a, lanes, dtype, cdt) for a in expr.args]
            return _call(expr.func, args, cdt)
        if kind is IfThenElse:
            mask = self._cond(expr.cond, lanes)
            if mask.all():
                return self._value(expr.then, lanes, dtype, cdt)
            if not mask.any():
                return self._value(expr.otherwise, lanes, dtype, cdt)
            where_t = np.nonzero(mask)[0]
            where_f = np.nonzero(~mask)[0]
            out = np.empty(n, dtype=cdt)
            out[where_t] = self._value(expr.then, lanes.subset(where_t), dtype, cdt)
            out[where_f] = self._value(expr.otherwise, lanes.subset(where_f), dtype, cdt)
            return out
        raise InterpreterError(f"cannot evaluate {kind.__name__} as a value")

    def _cond(self, cond, lanes: _Lanes) -> np.ndarray:
        kind = type(cond)
        if kind is Compare:
            result = np.ones(lanes.n, dtype=bool)
            for i, op in enumerate(cond.ops):
                a, b = cond.operands[i], cond.operands[i + 1]
                t = concrete(promote(natural_type(a), natural_type(b)))
                cdt = _compute_dtype(t)
                left = self._value(a, lanes, t, cdt)
                right = self._value(b, lanes, t, cdt)
                result &= _COMPARE[op](left, right)
            return result
        if kind is Logical:
            left = self._cond(cond.left, lanes)
            right = self._cond(cond.right, lanes)
            return (left & right) if cond.op == "&" else (left | right)
        if kind is Paren:
            return self._cond(cond.inner, lanes)
        t = concrete(natural_type(cond))
        return self._value(cond, lanes, t, _compute_dtype(t)) != 0


_COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def _binop(op: str, left: np.ndarray, right: np.ndarray, cdt: np.dtype) -> np.ndarray:
    integer = cdt.kind in "iu"
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op == "/":
        if integer:
            return _int_floordiv(left, right)
        return left / right
    if op == "//":
        return _int_floordiv(left, right) if integer else np.floor_divide(left, right)
    if op == "%":
        if integer:
            safe = np.where(right == 0, 1, right)
            return np.where(right == 0, 0, np.mod(left, safe)).astype(cdt)
        return np.mod(left, right)
    if op == "**":
        if integer:
            if (right < 0).any():
                return _convert(np.power(left.astype(np.float64), right.astype(np.float64)), cdt)
            return np.power(left, right)
        return np.power(left, right)
    raise InterpreterError(f"unknown operator {op}")


def _int_floordiv(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Floor division; division by zero yields 0 (as NumPy does) instead of a warning or a trap."""
    safe = np.where(right == 0, 1, right)
    return np.where(right == 0, 0, np.floor_divide(left, safe)).astype(left.dtype)


def _call(func: str, args: list[np.ndarray], cdt: np.dtype) -> np.ndarray:
    if func == "max":
        return np.maximum(args[0], args[1])
    if func == "min":
        return np.minimum(args[0], args[1])
    (x,) = args
    if func == "abs":
        return np.abs(x)
    xf = x if cdt.kind == "f" else x.astype(np.float64)
    if func == "exp":
        out = np.exp(xf)
    elif func == "log":
        out = np.log(xf)
    elif func == "sqrt":
        out = np.sqrt(xf)
    elif func == "sin":
        out = np.sin(xf)
    elif func == "cos":
        out = np.cos(xf)
    elif func == "erf":
        out = _erf(xf.astype(np.float64)).astype(np.float64) if xf.size else xf.astype(np.float64)
    else:
        raise InterpreterError(f"unknown function {func}")
    return _convert(np.asarray(out), cdt) if out.dtype != cdt else out


def _iterations(extents: list[int]):
    """The loop values of a sequential nest in header order (the last loop fastest)."""
    if sum(extents) <= _EAGER_PRODUCT:
        yield from itertools.product(*(range(n) for n in extents))
        return
    values = [0] * len(extents)
    if any(n <= 0 for n in extents):
        return
    while True:
        yield tuple(values)
        k = len(extents) - 1
        while k >= 0:
            values[k] += 1
            if values[k] < extents[k]:
                break
            values[k] = 0
            k -= 1
        if k < 0:
            return


# ------------------------------------------------------------------------------------------ entry point


def check_budget(program: Program, info: ProgramInfo, *, max_executions: int = MAX_EXECUTIONS) -> None:
    """Refuse, before anything is allocated, a run that would execute more than ``max_executions``
    statements or hold a tensor of more than ``MAX_ELEMENTS`` elements (``InterpreterError``, naming
    the statement and its loops)."""
    total = statement_executions(program.body)
    if total > max_executions:
        heaviest, loops = 0, ()
        for _path, _stmt, around in statements(program.body):
            count = math.prod(lp.extent for lp in around)
            if count > heaviest:
                heaviest, loops = count, around
        where = ", ".join(f"{lp.var} {lp.extent:,}" + (f" (line {lp.pos.line}, column {lp.pos.column})"
                                                       if lp.pos is not None else "") for lp in loops)
        raise InterpreterError(
            f"the program executes {total:,} statements (loops {where}); the reference interpreter's "
            f"budget is {max_executions:,} (leir.interpreter.MAX_EXECUTIONS): run a smaller instance")
    for name, tinfo in info.tensors.items():
        size = math.prod(tinfo.shape)
        if size > MAX_ELEMENTS:
            raise InterpreterError(
                f"{tinfo.role} {name} would have {size} elements (shape {tinfo.shape}); the reference "
                f"interpreter stops at {MAX_ELEMENTS}"
            )




def run(
    program: Program,
    inputs: Mapping[str, np.ndarray],
    *,
    info: ProgramInfo | None = None,
    return_all: bool = False,
    vectorise: bool = True,
    max_executions: int = MAX_EXECUTIONS,
) -> dict[str, np.ndarray]:
    """Execute ``program`` on ``inputs`` (every input, param and const) and return its outputs.

    Arrays are converted to each tensor's dtype (floats to integers truncate); entries for outputs are
    ignored; a name outside the signature, a missing input or a wrong shape raises ``InterpreterError``.

    ``info`` is the checker's result if the caller already has it (the program is checked otherwise);
    an invalid program raises ``LeirCheckError``. With ``return_all`` every tensor, intermediates
    included, is returned. ``bf16`` tensors come back as float32 arrays holding bf16 values.
    ``vectorise=False`` runs every loop one iteration at a time in program order — the literal
    semantics, slow; the tests use it as the oracle for the vectorisation plan. A run of more than
    ``max_executions`` statement executions, or with a tensor above ``MAX_ELEMENTS``, is refused before
    anything is allocated (``check_budget``).
    """
    if info is None:
        info = require_valid(program)
    elif not info.ok:
        raise LeirCheckError(info.errors)
    check_budget(program, info, max_executions=max_executions)
    signature = program.signature
    for name in inputs:
        decl = signature.get(name)
        if decl is None:
            raise InterpreterError(f"input {name} is not in the program's signature")
    store: dict[str, np.ndarray] = {}
    for decl in signature.tensors:
        if decl.role == "output":
            continue
        if decl.name not in inputs:
            raise InterpreterError(f"missing input {decl.name} ({decl.role}, shape {tuple(decl.shape)})")
        value = np.asarray(inputs[decl.name])
        if tuple(value.shape) != tuple(decl.shape):
            raise InterpreterError(
                f"input {decl.name} has shape {tuple(value.shape)} but the signature declares "
                f"{tuple(decl.shape)}"
            )
        store[decl.name] = np.ascontiguousarray(cast_to(value, decl.dtype)).copy()
    for name, tinfo in info.tensors.items():
        if name not in store:  # sizes within MAX_ELEMENTS (check_budget)
            store[name] = np.zeros(tinfo.shape, dtype=numpy_dtype(tinfo.dtype))
    with np.errstate(all="ignore"):
        try:
            _Machine(program, info, store, vectorise).run()
        except RecursionError:
            raise InterpreterError("expressions are nested too deeply to evaluate") from None
    if return_all:
        return store
    return {d.name: store[d.name] for d in signature.by_role("output")}
