"""TVMScript emission: the text of one ``@T.prim_func(s_tir=True)`` for a checked LEIR program.

``Writer`` writes the text the way ``verifier.lowering``'s docstring documents: the buffers, the zero and
init fills, one ``T.sblock`` per statement inside exactly its loops, and every expression by the
language's rules with the edge-value forms of ``verifier.edge_ops``. What it writes is decided elsewhere
and only asked here: the storage plan (``verifier.storage``), what each loop runs as
(``verifier.loop_mapping``) and what cuda refuses (``verifier.gpu_legality``).
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from leir import ast as A
from leir.dtypes import float_to_int, max_value, min_value, numel, numpy_dtype
from leir.gpu_limits import MAX_THREADS, all_loops, thread_tag
from leir.intervals import index_range
from leir.printer import canonical
from leir.promotion import concrete, natural_type, promote
from leir.semantics import ProgramInfo, StmtInfo, StmtKind
from verifier import edge_ops, fp8_ops, vector_math
from verifier import gpu_legality as gpu_rules
from verifier import targets as tg
from verifier import tvm_adapter as tvm_a
from verifier.errors import LoweringError
from verifier.loop_mapping import MappedLoop, UnhonouredLoop, map_block, path_label
from verifier.storage import StoragePlan

_FLOAT_WIDTH = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16}
_UNSIGNED = ("u8", "u16", "u32", "u64")
_INT_WIDTH = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}

_RESERVED = set(keyword.kwlist) | {"range", "T", "main", "int", "float", "bool", "max", "min"}
_INDEX_DTYPE = "int32"
#: TVMScript text that is cheap to repeat: a name, a load with plain indices, a literal (or a cast of one).
_LEAF = re.compile(r"^(?:T\.Cast\(\"\w+\", )?"  # optionally converted:
                   r"(?:[A-Za-z_]\w*(?:\[[\w ,]*\])?|T\.(?:b?float|u?int|bool)\d*\([^()]*\))\)?$")
#: A load with plain indices (a tensor element or a buffer-bound value).
_LOAD = re.compile(r"^[A-Za-z_]\w*\[[\w ,]*\]$")
#: A ``T.bind`` variable of ``Writer.let`` (a buffer-bound value ``_eN[0]`` is opaque to TVM: not one).
_BOUND = re.compile(r"\b_e\d+\b(?!\[)")
#: A loop variable (block iterator ``v_<name>``) used as a value, not an index, in lowered text.
_LOOP_VALUE = re.compile(r"T\.Cast\(\"\w+\", v_\w+\)")
_CALL = {"exp": "T.exp", "log": "T.log", "sqrt": "T.sqrt", "erf": "T.erf", "abs": "T.abs",
         "sin": "T.sin", "cos": "T.cos",
         "max": "T.max", "min": "T.min"}


# ---------------------------------------------------------------------------------------------- types


def _tvm_dtype(dtype: str) -> str:
    try:
        return tvm_a.TVM_DTYPES[dtype]
    except KeyError:
        raise LoweringError(f"dtype {dtype!r} has no TVM lowering") from None


# --------------------------------------------------------------------------------------------- writer


def _may_fold_to_zero(operand: A.Expr) -> bool:
    """An operand TVM may fold to the constant 0: no tensor read in it, and not a non-zero literal."""
    node = A.strip_parens(operand)
    if isinstance(node, A.Neg):
        node = A.strip_parens(node.operand)
    if isinstance(node, A.Inf) or (isinstance(node, A.Num) and node.value != 0):
        return False
    return not any(isinstance(n, A.TensorRef) for n in A.walk_expr(operand))


def _additive_terms(operand: A.Expr) -> set[str]:
    """The texts of the terms a sum/difference is made of (``(A+B)-C`` → A, B, C), signs dropped."""
    node = A.strip_parens(operand)
    if isinstance(node, A.Neg):
        return _additive_terms(node.operand)
    if isinstance(node, A.BinOp) and node.op in ("+", "-"):
        return _additive_terms(node.left) | _additive_terms(node.right)
    return {canonical(node)}


class Writer:
    """Writes the TVMScript of one program; one instance per lowering."""

    def __init__(self, program: A.Program, info: ProgramInfo, target: dict[str, Any]) -> None:
        self.program = program
        self.info = info
        self.target = target
        self.gpu = tg.is_gpu(target)
        #: scope of the buffers ``let`` binds values in (one element, or one per lane under a ``V`` loop):
        #: registers on cuda. On the CPU a ``local`` buffer is a TVM workspace allocation, made again in
        #: every iteration of the loop around it, which also keeps LLVM from vectorising a serial loop
        #: (``log`` of 3.7M floats: 32 ms against 2.5 ms) and made a ``P`` loop over ``V^{16}`` rows of
        #: ``exp`` 4x slower than a serial one; a ``global`` buffer of up to 1 KB is a stack slot
        #: (``bench/math_calls.py``).
        self.binding_scope = "local" if self.gpu else "global"
        self.lines: list[str] = []
        self.unhonoured: list[UnhonouredLoop] = []
        self.storage = StoragePlan(program, info)
        self.stmt_order = self.storage.stmt_order
        self.tnames = {name: (name + "_" if name in _RESERVED else name) for name in info.tensors}
        #: what each loop of the top-level block being written runs as: (block path, position) -> mapping
        self.mapping: dict[tuple[tuple[int, ...], int], MappedLoop] = {}
        #: bindings of the statement being written (emitted at the top of its sblock, see ``let``)
        self.lets: list[str] = []
        #: (value, dtype, in a buffer) -> its name, for the statement being written
        self.bound: dict[tuple[object, ...], str] = {}
        #: (extent, block iterator) of the vectorised loop around the statement being written: its
        #: bindings are buffers with one element per lane (TVM neither vectorises ``T.bind`` nor widens a
        #: one-element buffer)
        self.lanes: tuple[int, str] | None = None
        #: allocations of those lane buffers, emitted before the vectorised loop (``_block``)
        self.lane_allocs: list[str] = []
        #: LEIR dtype of the statement being written
        self.stmt_dtype = ""
        #: depth of ``if_then_else`` branches around the expression being written
        self.in_branch = 0
        self.let_count = 0
        #: the statement being written is a cuda cross-thread reduction (needs TVM's own ``T.max``)
        self.plain_minmax = False
        self.use_init = self.storage.use_init

    # ---- helpers -------------------------------------------------------------------------------
    def _kind(self, path: tuple[int, ...]) -> StmtKind:
        return self.storage.kind(path)

    def _sinfo(self, path: tuple[int, ...]) -> StmtInfo:
        return self.storage.sinfo(path)

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def let(self, value: str, tdt: str, body: Callable[[str], str], *, opaque: bool = False,
            fresh: bool = False) -> str:
        """``body(x)`` with ``x`` standing for ``value``, evaluated once.

        Every binding is a statement at the top of the sblock, and a value bound twice in one statement
        is bound once. A value that mentions no other binding is ``_eN = T.bind(value)``. TVM's simplifier
        substitutes every ``T.bind`` variable into whatever it simplifies afterwards, so a chain of
        bindings that each mention the previous one twice (nested NaN-propagating ``max``, saturating
        conversions of conversions) would grow to 2^depth nodes inside TVM; a value that mentions an
        earlier binding is therefore stored in a one-element buffer (``_eN[0] = value``),
        which the simplifier cannot see through, and build time stays linear in the depth. ``opaque``
        asks for such a buffer even for a leaf: it hides a value from TVM's rewrites altogether (loop
        variables in unsigned arithmetic and float ``//``, which TVM's simplifier mis-folds). ``fresh``
        binds it anew even when the same value is bound already (two hidden copies of ``x`` must not be
        one buffer, or TVM cancels ``(x + _e) - _e``).

        A binding runs even where an ``if_then_else`` branch would not: safe, since every operation the
        lowering emits is total and every read whose index is not proved in range is clamped
        (``tref``). A leaf is used as it is. The statement of a cuda cross-thread reduction keeps
        ``T.bind`` only: TVM's reducer pattern refuses buffer stores in it.
        """
        if not opaque and _LEAF.match(value):
            return body(value)
        # a bf16 statement keeps its chained f32 values in T.bind: TVM's bf16 legalisation breaks on f32
        # buffers there (LowerIntrin crashes); its max/min and // chains are cut by bf16 buffers instead
        chained = bool(_BOUND.search(value)) and self.stmt_dtype != "bf16"
        in_buffer = not self.plain_minmax and (opaque or self.lanes is not None or chained)
        key: tuple[object, ...] = (value, tdt, in_buffer) + ((self.let_count,) if fresh else ())
        if key not in self.bound:
            name = f"_e{self.let_count}"
            self.let_count += 1
            if in_buffer:
                lane = "0"
                if self.lanes is None:
                    self.lets.append(
                        f"{name} = T.sblock_alloc_buffer((1,), \"{tdt}\", scope=\"{self.binding_scope}\")")
                else:
                    extent, lane = self.lanes
                    self.lane_allocs.append(
                        f"{name} = T.alloc_buffer(({extent},), \"{tdt}\", scope=\"{self.binding_scope}\")")
                self.lets.append(f"{name}[{lane}] = {value}")
                self.bound[key] = f"{name}[{lane}]"
            else:
                self.lets.append(f"{name} = T.bind({value})")  # T.bind: a scalar, never a buffer view
                self.bound[key] = name
        return body(self.bound[key])

    def convert(self, text: str, src: str, dst: str) -> str:
        """A value of LEIR dtype ``src`` converted to ``dst`` by the language's rules (docs/leir.md §6)."""
        if src == dst:
            return text
        if fp8_ops.is_fp8(src):  # every fp8 value is exact in f32, the type fp8 is computed in
            return self.convert(fp8_ops.decode(text, src, self.let), "f32", dst)
        if fp8_ops.is_fp8(dst):
            return fp8_ops.encode(self.convert(text, src, "f32"), dst, self.let)
        if src in _FLOAT_WIDTH and dst in _INT_WIDTH:
            return edge_ops.float_to_int(text, src, dst, self.let)
        return f"T.Cast(\"{_tvm_dtype(dst)}\", {text})"

    @staticmethod
    def var(name: str) -> str:
        return name + "_" if name in _RESERVED or name.startswith("v_") else name

    @staticmethod
    def ivar(name: str) -> str:
        return "v_" + name

    def tdt(self, name: str) -> str:
        return self.info.tensors[name].dtype

    # ---- program -------------------------------------------------------------------------------
    def run(self) -> str:
        sig = self.program.signature
        for t in self.info.tensors.values():
            if numel(t.shape) >= 2**31:
                raise LoweringError(f"tensor {t.name} has {numel(t.shape)} elements; the lowering indexes "
                                    "with int32 (every corpus tensor fits), larger tensors are not supported")
        params = ", ".join(
            f"{self.tnames[d.name]}: T.Buffer({_shape(self.info.tensors[d.name].shape)}, "
            f"\"{_tvm_dtype(self.info.tensors[d.name].dtype)}\")"
            for d in sig.tensors)
        self.emit(0, "@T.prim_func(s_tir=True)")
        self.emit(0, f"def main({params}):")
        self.emit(1, 'T.func_attr({"tir.noalias": True})')
        self.kernel_allocs: dict[int, list[str]] = {}
        #: CPU on-chip buffers allocated per iteration of their block's leading loops (``_private_copy``):
        #: name -> (top-level block, leading loops = leading dimensions dropped)
        self.private: dict[str, tuple[int, int]] = {}
        if not self.gpu:
            for t in self.info.intermediates:
                found = self.storage.private_copy(t.name)
                if found is not None:
                    self.private[t.name] = found
        for t in self.info.intermediates:
            if self.gpu and t.scope in ("s", "l"):
                owners = self.storage.owners(t.name)
                gpu_rules.check_one_kernel(t.name, t.scope, owners)
                self.kernel_allocs.setdefault(owners[0] if owners else 0, []).append(t.name)
                continue
            if t.name in self.private:
                continue
            self.emit(1, self._alloc(t.name, "global"))
        if self.gpu:
            gpu_rules.check_gpu_limits(self.program, self.info)
        for t in self.info.tensors.values():
            if t.role in ("output", "intermediate") and self.storage.needs_zero(t.name):
                self._fill(t.name, _literal(0, t.dtype), f"zero_{t.name}", 1)
        for b_index, block in enumerate(self.program.body.blocks):
            for path, stmt, _ in self.stmt_order:
                if path[0] == b_index and self._kind(path) is StmtKind.REDUCE and not self.use_init[path]:
                    init = self._sinfo(path).init
                    value = self.literal_expr(init, self.tdt(stmt.target.name))
                    self._fill(stmt.target.name, value, f"init_{stmt.target.name}_{path_label(path)}", 1)
            self._top_block(block, b_index)
        return "\n".join(self.lines) + "\n"

    def _fill(self, name: str, value: str, label: str, depth: int) -> None:
        """A nest writing ``value`` into every element of ``name`` (parallel on CPU, bound on cuda)."""
        shape = self.info.tensors[name].shape
        if self.gpu:
            gpu_rules.check_no_on_chip_fill(name, label, {n for names in self.kernel_allocs.values()
                                                          for n in names})
        loop_vars = [f"i{k}" for k in range(len(shape))]
        if self.gpu:
            bound = 0
            if shape:
                self.emit(depth, f"for i0 in T.thread_binding({shape[0]}, thread=\"blockIdx.x\"):")
                depth += 1
                bound = 1
            else:
                self.emit(depth, "for u_bx in T.thread_binding(1, thread=\"blockIdx.x\"):")
                depth += 1
            if len(shape) > 1 and shape[1] <= MAX_THREADS["x"]:
                self.emit(depth, f"for i1 in T.thread_binding({shape[1]}, thread=\"threadIdx.x\"):")
                depth += 1
                bound = 2
            else:
                self.emit(depth, "for u_tx in T.thread_binding(1, thread=\"threadIdx.x\"):")
                depth += 1
            for k in range(bound, len(shape)):
                self.emit(depth, f"for i{k} in range({shape[k]}):")
                depth += 1
        else:
            for k, n in enumerate(shape):
                head = f"T.parallel({n})" if k == 0 else f"range({n})"
                self.emit(depth, f"for i{k} in {head}:")
                depth += 1
        self.emit(depth, f"with T.sblock(\"{label}\"):")
        depth += 1
        for k, n in enumerate(shape):
            self.emit(depth, f"v_i{k} = T.axis.spatial({n}, {loop_vars[k]})")
        sub = ", ".join(f"v_i{k}" for k in range(len(shape))) if shape else "()"
        self.emit(depth, f"{self.tnames[name]}[{sub}] = {value}")

    # ---- loops and statements ------------------------------------------------------------------
    def _alloc(self, name: str, scope: str, *, dropped: int = 0) -> str:
        t = self.info.tensors[name]
        return f"{self.tnames[name]} = T.alloc_buffer({_shape(t.shape[dropped:])}, " \
               f"\"{_tvm_dtype(t.dtype)}\", scope=\"{scope}\")"

    def _top_block(self, block: A.Block, b_index: int) -> None:
        depth = 1
        if self.gpu and not _has_b(block):
            self.emit(depth, "for u_bx in T.thread_binding(1, thread=\"blockIdx.x\"):")
            self.emit(depth + 1, "for u_tx in T.thread_binding(1, thread=\"threadIdx.x\"):")
            depth += 2
        allocs: dict[int, list[str]] = {}
        for name in self.kernel_allocs.get(b_index, []):
            # shared: inside the leading blockIdx loops (one copy per block); local: inside every
            # leading bound loop (one copy per thread)
            pos = 0
            for lp in block.loops:
                if lp.kind != "B" or (self.info.tensors[name].scope == "s"
                                      and not thread_tag(lp.var).startswith("blockIdx")):
                    break
                pos += 1
            allocs.setdefault(pos, []).append(name)
        for name, (owner, dropped) in self.private.items():
            if owner == b_index:
                allocs.setdefault(dropped, []).append(name)
        self.mapping = {(m.path, m.position): m
                        for m in map_block(self.program, b_index, self.target, self.info)}
        self._block(block, (b_index,), (), depth, tags=(), allocs=allocs)

    def _emit_allocs(self, names: list[str], label: str, depth: int) -> int:
        self.emit(depth, f"with T.sblock(\"{label}\"):")
        # an opaque scope for on-chip buffers; regions left empty (auto-detection would list the buffers
        # allocated here, which TVM's well-formedness check refuses)
        self.emit(depth + 1, "T.reads()")
        self.emit(depth + 1, "T.writes()")
        for name in names:
            if not self.gpu:
                self.emit(depth + 1, self._alloc(name, "global", dropped=self.private[name][1]))
                continue
            scope = "shared" if self.info.tensors[name].scope == "s" else "local"
            self.emit(depth + 1, self._alloc(name, scope))
        return depth + 1

    def _block(self, block: A.Block, path: tuple[int, ...], outer: tuple[A.Loop, ...], depth: int,
               *, tags: tuple[str, ...],
               allocs: dict[int, list[str]] | None = None) -> None:
        allocs = allocs or {}
        lanes_at: tuple[int, int] | None = None
        for k, loop in enumerate(block.loops):
            if k in allocs:
                depth = self._emit_allocs(allocs[k], f"alloc_{path_label(path)}_{k}", depth)
            head, tag = self._loop_head(self.mapping[(path, k)])
            if tag:
                tags = tags + (tag,)
            if tag.startswith("vector:"):
                lanes_at = (len(self.lines), depth)
            self.emit(depth, f"for {self.var(loop.var)} in {head}:")
            depth += 1
        if len(block.loops) in allocs:
            depth = self._emit_allocs(allocs[len(block.loops)], f"alloc_{path_label(path)}", depth)
        loops = outer + block.loops
        for i, item in enumerate(block.items):
            if isinstance(item, A.Assign):
                self._statement(item, path + (i,), loops, depth, tags)
            else:
                self._block(item, path + (i,), loops, depth, tags=tags)
        if lanes_at is not None:
            # the lane buffers of the bindings inside the vectorised loop, allocated right before it: TVM
            # would shrink a buffer allocated inside the loop's sblock to one element
            at, lane_depth = lanes_at
            self.lines[at:at] = ["    " * lane_depth + line for line in self.lane_allocs]
            self.lane_allocs = []

    def _loop_head(self, mapped: MappedLoop) -> tuple[str, str]:
        """The ``for`` head of a mapped loop and the tag it adds for the loops and statements inside
        (``vector:<var>``, which ``_statement`` gives its lanes by, or its cuda axis); records it when its
        kind is not honoured."""
        if mapped.error is not None:
            raise LoweringError(mapped.error)
        unhonoured = mapped.unhonoured()
        if unhonoured is not None:
            self.unhonoured.append(unhonoured)
        n = mapped.loop.extent
        if mapped.runs_as == "vector":
            return f"T.vectorized({n})", f"vector:{mapped.loop.var}"
        if mapped.runs_as == "bound":
            return f"T.thread_binding({n}, thread=\"{mapped.thread}\")", mapped.thread
        heads = {"serial": f"range({n})", "unrolled": f"T.unroll({n})", "parallel": f"T.parallel({n})"}
        return heads[mapped.runs_as], ""

    def _statement(self, stmt: A.Assign, path: tuple[int, ...], loops: tuple[A.Loop, ...], depth: int,
                   tags: tuple[str, ...]) -> None:
        sinfo = self._sinfo(path)
        dtype = self.tdt(stmt.target.name)
        use_init = sinfo.kind is StmtKind.REDUCE and self.use_init[path]
        reduce_vars = set(sinfo.reduce_vars) if use_init else set()
        if self.gpu:
            gpu_rules.check_races(self.info, stmt, path, loops, use_init)
        self.emit(depth, f"with T.sblock(\"{stmt.target.name}_{path_label(path)}\"):")
        depth += 1
        ranges = {lp.var: (0, lp.extent - 1) for lp in loops}
        for lp in loops:
            kind = "reduce" if lp.var in reduce_vars else "spatial"
            self.emit(depth, f"{self.ivar(lp.var)} = T.axis.{kind}({lp.extent}, {self.var(lp.var)})")
        lhs = self.tref(stmt.target, ranges, clamp=False)
        thread_reduce = use_init and self.gpu and any(
            lp.kind == "B" and lp.var in reduce_vars and thread_tag(lp.var).startswith("threadIdx")
            for lp in loops)
        if use_init:
            init = self.literal_expr(sinfo.init, dtype)
            if thread_reduce and sinfo.combiner in ("max", "min") and dtype in _FLOAT_WIDTH:
                # TVM's cross-thread reducers use the finite extreme as identity, not +-inf
                init = f"T.{'min' if sinfo.combiner == 'max' else 'max'}_value(\"{_tvm_dtype(dtype)}\")"
            self.emit(depth, "with T.init():")
            self.emit(depth + 1, f"{lhs} = {init}")
        # TVM recognises a cross-thread reducer only as T.max/T.min, so that statement keeps them
        self.plain_minmax = bool(thread_reduce)
        self.lets = []
        self.bound = {}
        self.stmt_dtype = dtype
        vector = [tag.split(":", 1)[1] for tag in tags if tag.startswith("vector:")]
        self.lanes = next(((lp.extent, self.ivar(lp.var)) for lp in loops if vector and lp.var == vector[0]),
                          None)
        if dtype == "bool":  # bool statements compute in i64 and store value != 0
            value = f"({self.expr(stmt.value, 'i64', ranges)} != T.int64(0))"
        elif fp8_ops.is_fp8(dtype):  # fp8 statements compute in f32 and round on the store
            # the f32 value is held in a buffer first: encoding a T.Cast of a bf16 read directly, TVM's
            # bf16 legalisation garbles the bits the encoder reinterprets (every element came out wrong)
            value = self.let(self.expr(stmt.value, "f32", ranges), "float32",
                             lambda v: fp8_ops.encode(v, dtype, self.let), opaque=True)
        else:
            value = self.expr(stmt.value, dtype, ranges)
        for declaration in self.lets:
            self.emit(depth, declaration)
        self.emit(depth, f"{lhs} = {value}")
        self.plain_minmax = False

    # ---- expressions ---------------------------------------------------------------------------
    def tref(self, ref: A.TensorRef, ranges: dict[str, tuple[int, int]], *, clamp: bool = True) -> str:
        info = self.info.tensors[ref.name]
        if not ref.indices:
            return f"{self.tnames[ref.name]}[()]"
        parts = []
        for dim, index in zip(info.shape, ref.indices, strict=False):
            text = self.index(index, ranges)
            if clamp:
                # an index the interval analysis cannot bound (a gather, a product of variables) is
                # clamped inside an if_then_else branch: the checker (or the interpreter, for a gather)
                # holds it in range only where the branch is taken, and bindings run either way
                rng = index_range(index, ranges)
                if rng is None and self.in_branch:
                    rng = (-1, dim)
                if rng is not None and rng[0] < 0:
                    text = f"T.max({text}, 0)"
                if rng is not None and rng[1] > dim - 1:
                    text = f"T.min({text}, {dim - 1})"
            parts.append(text)
        if ref.name in self.private:
            parts = parts[self.private[ref.name][1]:]
        return f"{self.tnames[ref.name]}[{', '.join(parts) or '()'}]"

    def index(self, e: A.Expr, ranges: dict[str, tuple[int, int]]) -> str:
        if isinstance(e, A.Paren):
            return self.index(e.inner, ranges)
        if isinstance(e, A.Num):
            if not e.is_int:
                raise LoweringError(f"non-integer index {e.text}")
            return e.text
        if isinstance(e, A.Var):
            return self.ivar(e.name)
        if isinstance(e, A.Neg):
            return f"(-{_grouped(e.operand, self.index(e.operand, ranges), _index_prec)})"
        if isinstance(e, A.TensorRef):
            text = self.convert(self.tref(e, ranges), self.tdt(e.name), e.dtype)
            return text if _tvm_dtype(e.dtype) == _INDEX_DTYPE else self.convert(text, e.dtype, "i32")
        if isinstance(e, A.BinOp) and e.op in ("+", "-", "*", "//", "%", "/"):
            return _infix(e, self.index(e.left, ranges), self.index(e.right, ranges), _index_prec,
                          "//" if e.op == "/" else e.op)
        raise LoweringError(f"unsupported index expression {type(e).__name__}")

    def literal_expr(self, e: A.Expr | None, dtype: str) -> str:
        """The init expression of a reduction (``0``, ``1``, ``-inf``, ``inf``) as a dtype literal."""
        return self.expr(e if e is not None else A.Num("0"), dtype, {})

    def etype(self, e: A.Expr) -> str:
        """The type an expression has on its own (for comparisons), by the language's one rule."""
        return natural_type(e)

    def expr(self, e: A.Expr, dtype: str, ranges: dict[str, tuple[int, int]]) -> str:
        """``e`` evaluated in LEIR ``dtype``, or in the index dtype when ``dtype`` is ``None``."""
        tdt = _tvm_dtype(dtype)
        if isinstance(e, A.Paren):
            return self.expr(e.inner, dtype, ranges)
        if isinstance(e, A.Num):
            return _literal(e.value, dtype)
        if isinstance(e, A.Inf):
            return _literal(max_value(dtype), dtype)
        if isinstance(e, A.Var):
            if tdt == _INDEX_DTYPE:
                return self.ivar(e.name)
            text = f"T.Cast(\"{tdt}\", {self.ivar(e.name)})"
            if dtype in _UNSIGNED:
                # TVM's range analysis reasons about unsigned arithmetic of a loop variable as if it were
                # signed (u64 ``A//(i-3)`` came out wrong): the value is hidden from it
                return self.let(text, tdt, lambda x: x, opaque=True)
            return text
        if isinstance(e, A.TensorRef):
            # a read annotated with another dtype converts to the annotation first
            text = self.convert(self.tref(e, ranges), self.tdt(e.name), e.dtype)
            return self.convert(text, e.dtype, dtype)
        if isinstance(e, A.Neg):
            inner = A.strip_parens(e.operand)
            if isinstance(inner, A.Inf):
                return _literal(min_value(dtype), dtype)
            if isinstance(inner, A.Num):
                return _literal(-inner.value, dtype)
            if dtype in edge_ops.WIDENED:
                return edge_ops.wrapping("-", self.expr(e.operand, dtype, ranges), None, dtype)
            if dtype in _UNSIGNED:  # TVMScript negates by multiplying with -1, which no uint holds
                operand = self.expr(e.operand, dtype, ranges)
                operand = self._opaque_u64(operand) if dtype == "u64" else operand
                return f"({edge_ops.unsigned_sub(None, operand, tdt)})"
            text = self.expr(e.operand, dtype, ranges)
            return f"(-{_grouped(e.operand, text, lambda c: _infix_prec(c, dtype in _FLOAT_WIDTH))})"
        if isinstance(e, A.BinOp):
            return self._binop(e, dtype, ranges)
        if isinstance(e, A.Call):
            args = [self.expr(a, dtype, ranges) for a in e.args]
            if e.func in ("exp", "log", "sqrt", "erf", "sin", "cos") and dtype not in _FLOAT_WIDTH:
                return self.convert(f"{_CALL[e.func]}(T.Cast(\"float64\", {args[0]}))", "f64", dtype)
            if e.func in ("max", "min") and dtype == "bf16" and not self.plain_minmax:
                # TVM's bfloat16 select/isnan mistype the bound operands: choose in f32 (exact for bf16);
                # an operand that is not a leaf is bound as bfloat16 first (bound as f32 it crashes TVM's
                # intrinsic lowering once it is a buffer)
                args = [a if _LEAF.match(a) else self.let(a, "bfloat16", lambda x: x, opaque=True)
                        for a in args]
                wide = [f"T.Cast(\"float32\", {a})" for a in args]
                chosen = edge_ops.nan_max_min(e.func, wide[0], wide[1], "float32", self.let)
                return f"T.Cast(\"bfloat16\", {chosen})"
            if e.func in ("max", "min") and dtype in _FLOAT_WIDTH and not self.plain_minmax:
                return edge_ops.nan_max_min(e.func, args[0], args[1], tdt, self.let)
            if e.func == "abs" and dtype == "i32":
                return edge_ops.int_abs(args[0], dtype, self.let)
            if e.func in vector_math.ARITHMETIC and dtype in ("f32", "f16") and not self.gpu:
                # T.erf/T.exp/T.log: a scalar libm call per element, even vectorised (bf16 keeps it:
                # TVM's bf16 legalisation garbles the float32 bindings the arithmetic needs)
                operand = args[0] if dtype == "f32" else f"T.Cast(\"float32\", {args[0]})"
                return self.convert(vector_math.ARITHMETIC[e.func](operand, self.let), "f32", dtype)
            if e.func == "erf" and dtype in ("f16", "bf16"):  # neither LLVM nor CUDA has a half-precision erf
                return f"T.Cast(\"{tdt}\", T.erf(T.Cast(\"float32\", {args[0]})))"
            return f"{_CALL[e.func]}({', '.join(args)})"
        if isinstance(e, A.IfThenElse):
            cond = self.cond(e.cond, ranges)
            self.in_branch += 1
            then, otherwise = self.expr(e.then, dtype, ranges), self.expr(e.otherwise, dtype, ranges)
            self.in_branch -= 1
            return f"T.if_then_else({cond}, {then}, {otherwise})"
        raise LoweringError(f"unsupported expression {type(e).__name__}")

    def _binop(self, e: A.BinOp, dtype: str, ranges: dict[str, tuple[int, int]]) -> str:
        is_float = dtype in _FLOAT_WIDTH
        tdt = _tvm_dtype(dtype)
        if e.op == "**":
            exponent = A.strip_parens(e.right)
            base = A.strip_parens(e.left)
            if isinstance(exponent, A.Num) and exponent.is_int and exponent.value == 2 and isinstance(
                    base, (A.TensorRef, A.Var, A.Num)):
                b = self.expr(base, dtype, ranges)
                return self._arith("*", b, b, dtype)
            if not is_float:
                if isinstance(exponent, A.Num) and exponent.is_int and exponent.value <= 8:
                    if not exponent.value:
                        return _literal(1, dtype)
                    return self.let(self.expr(base, dtype, ranges), tdt, lambda b: functools.reduce(
                        lambda acc, _: self._arith("*", acc, b, dtype), range(int(exponent.value) - 1), b))
                raise LoweringError(f"'**' in integer dtype {dtype} needs a small literal exponent")
            base_text, exp_text = self.expr(e.left, dtype, ranges), self.expr(e.right, dtype, ranges)
            if dtype == "bf16":  # TVM's pow refuses bfloat16: compute in f32, round on the way back
                return (f"T.Cast(\"bfloat16\", T.pow(T.Cast(\"float32\", {base_text}), "
                        f"T.Cast(\"float32\", {exp_text})))")
            return f"T.pow({base_text}, {exp_text})"
        left = self.expr(e.left, dtype, ranges)
        right = self.expr(e.right, dtype, ranges)
        if is_float and e.op in ("+", "-", "*", "/"):
            left, right = self._ieee_operands(e, left, right, tdt)
        if e.op in ("//", "%") or (e.op == "/" and not is_float):
            if not is_float:
                return edge_ops.int_div_mod(e.op, left, right, "i64" if dtype == "bool" else dtype, self.let)
            if e.op == "//":
                # TVM rewrites a float remainder of a loop variable into integer arithmetic (and fails):
                # an operand that mentions one is hidden from it
                left, right = (self.let(t, tdt, lambda x: x, opaque=True) if _LOOP_VALUE.search(t) else t
                               for t in (left, right))
                return edge_ops.float_floordiv(left, right, dtype, self.let)
            return edge_ops.float_mod(left, right, dtype, self.let)
        if dtype in edge_ops.WIDENED:
            return edge_ops.wrapping(e.op, left, right, dtype)
        if e.op == "-" and dtype in _UNSIGNED:
            lp = _infix_prec(A.strip_parens(e.left), is_float)
            left = f"({left})" if lp is not None and lp < _INFIX_PREC["-"] else left
            return edge_ops.unsigned_sub(left, self._opaque_u64(right) if dtype == "u64" else right, tdt)
        return _infix(e, left, right, lambda c: _infix_prec(c, is_float))

    def _ieee_operands(self, e: A.BinOp, left: str, right: str, tdt: str) -> tuple[str, str]:
        """Float operands hidden from TVM's real-number identities, which IEEE arithmetic does not obey.

        TVM folds ``x*0``, ``0*x`` and ``0/x`` to 0 as it builds the TIR (and refuses ``x/0``), and its
        simplifier cancels ``x - x`` and ``(x + y) - x``: wrong wherever ``x`` is ±inf or NaN (the
        interpreter gives NaN). So a factor, numerator or divisor without a tensor read that is not a
        non-zero literal (``0``, ``1-1``, a loop variable) is hidden, and so is the right operand of a
        ``+``/``-`` whose sides share a term (``tests/verifier/test_edge_values.py``). Programs without
        such forms lower exactly as before.
        """
        if e.op in ("*", "/"):
            return (self.let(left, tdt, lambda x: x, opaque=True) if _may_fold_to_zero(e.left) else left,
                    self.let(right, tdt, lambda x: x, opaque=True) if _may_fold_to_zero(e.right) else right)
        if _additive_terms(e.left) & _additive_terms(e.right):
            return left, self.let(right, tdt, lambda x: x, opaque=True, fresh=True)
        return left, right

    def _opaque_u64(self, subtrahend: str) -> str:
        """A u64 subtrahend hidden from TVM unless it is a load: TVM's arithmetic mis-reads a u64 constant
        above 2^63 as negative (the complement ``~3`` of ``a + ~b + 1`` gave wrong quotients), and a
        native ``0 - x`` came out 0."""
        if _LOAD.match(subtrahend):
            return subtrahend
        return self.let(subtrahend, "uint64", lambda x: x, opaque=True)

    @staticmethod
    def _arith(op: str, left: str, right: str, dtype: str) -> str:
        """``+ - *`` on lowered text (small, bounded nests: ``x*x``, small integer powers); i32/u32 wrap."""
        if dtype in edge_ops.WIDENED:
            return edge_ops.wrapping(op, left, right, dtype)
        return f"({left} {op} {right})"

    def cond(self, c: A.Cond, ranges: dict[str, tuple[int, int]]) -> str:
        if isinstance(c, A.Paren):
            return self.cond(c.inner, ranges)
        if isinstance(c, A.Logical):
            fn = "T.And" if c.op == "&" else "T.Or"
            return f"{fn}({self.cond(c.left, ranges)}, {self.cond(c.right, ranges)})"
        if isinstance(c, A.Compare):
            parts = []
            for k, op in enumerate(c.ops):
                left, right = c.operands[k], c.operands[k + 1]
                parts.append(self._compare(left, op, right, ranges))
            out = parts[0]
            for p in parts[1:]:
                out = f"T.And({out}, {p})"
            return out
        # a lone expression: a bool tensor (or anything nonzero)
        kind = self.etype(c)
        if kind == "bool":
            return self.expr(c, "bool", ranges)
        dtype = _computed(concrete(kind))
        return self._not_equal(self.expr(c, dtype, ranges), _literal(0, dtype), dtype)

    def _not_equal(self, left: str, right: str, dtype: str) -> str:
        if dtype in _FLOAT_WIDTH:
            return edge_ops.float_not_equal(left, right, _tvm_dtype(dtype), self.let)
        return f"({left} != {right})"

    def _compare(self, left: A.Expr, op: str, right: A.Expr, ranges: dict[str, tuple[int, int]]) -> str:
        kind = _computed(concrete(promote(self.etype(left), self.etype(right))))  # two literals (2>inf)
        if kind not in _FLOAT_WIDTH and _index_like(left) and _index_like(right):
            return f"({self.index(left, ranges)} {op} {self.index(right, ranges)})"
        if op == "!=":
            return self._not_equal(self.expr(left, kind, ranges), self.expr(right, kind, ranges), kind)
        return f"({self.expr(left, kind, ranges)} {op} {self.expr(right, kind, ranges)})"


# ------------------------------------------------------------------------------------------ utilities


def _computed(dtype: str) -> str:
    """The type values of ``dtype`` are computed in: f32 for the fp8 storage types, else ``dtype``."""
    return "f32" if fp8_ops.is_fp8(dtype) else dtype


def _literal(value: int | float | bool, dtype: str) -> str:
    if fp8_ops.is_fp8(dtype):  # stored (a fill, a reduction's init) as the byte of the rounded value
        return fp8_ops.literal(float(value), dtype)
    tdt = _tvm_dtype(dtype)
    if dtype == "bool":
        return f"T.bool({bool(value)})"
    if dtype in _INT_WIDTH:
        if isinstance(value, float):  # a float literal converts like any float: truncate, saturate
            value = int(float_to_int(np.array(value), numpy_dtype(dtype)))
        return edge_ops.lit(int(value), tdt)
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f"T.{tdt}(\"{'inf' if value > 0 else '-inf'}\")"
    return f"T.{tdt}({float(value)!r})"


_INFIX_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "%": 2}


def _infix(e: A.BinOp, left: str, right: str, prec_of: Callable[[A.Expr], int | None],
           op: str | None = None) -> str:
    """``left op right`` with only the parentheses Python needs to keep the tree.

    Long sums then stay flat text (``a + b + c``), within Python's limit of 200 nested brackets, where
    one pair per operator would not be.
    """
    mine = _INFIX_PREC[e.op]
    lp, rp = prec_of(A.strip_parens(e.left)), prec_of(A.strip_parens(e.right))
    if lp is not None and lp < mine:
        left = f"({left})"
    if rp is not None and rp <= mine:
        right = f"({right})"
    return f"{left} {op or e.op} {right}"


def _grouped(e: A.Expr, text: str, prec_of: Callable[[A.Expr], int | None]) -> str:
    """``text`` (the lowering of ``e``) in parentheses when it is a bare infix operation."""
    return f"({text})" if prec_of(A.strip_parens(e)) is not None else text


def _infix_prec(e: A.Expr, is_float: bool) -> int | None:
    """Precedence of a value expression the lowering prints as a bare infix operation, else ``None``."""
    if isinstance(e, A.BinOp) and (e.op in ("+", "-", "*") or (e.op == "/" and is_float)):
        return _INFIX_PREC[e.op]
    return None


def _index_prec(e: A.Expr) -> int | None:
    """The same for index expressions, where ``/`` ``//`` ``%`` are Python's infix ``//`` and ``%``."""
    if isinstance(e, A.BinOp) and e.op in _INFIX_PREC:
        return _INFIX_PREC[e.op]
    return None


def _index_like(e: A.Expr) -> bool:
    """Only loop variables and integer literals: compare in the index dtype, no casts."""
    for sub in A.walk_expr(e):
        if isinstance(sub, (A.TensorRef, A.Inf, A.Call, A.IfThenElse)):
            return False
        if isinstance(sub, A.Num) and not sub.is_int:
            return False
    return True


def _has_b(block: A.Block) -> bool:
    return any(lp.kind == "B" for lp in all_loops(block))

def _shape(shape: tuple[int, ...]) -> str:
    if not shape:
        return "()"
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


