"""A static cost model of a LEIR program: what ``RulePolicy`` ranks candidate steps by.

No measurement, no TVM: the model counts, per statement, the iterations of its loop nest, the arithmetic
of its right-hand side (a transcendental call weighs ``TRANSCENDENTAL_WEIGHT`` operations), the bytes it
touches per iteration (global tensors at full weight, staged ``s``/``l`` scopes cheaper; an access
invariant in the innermost loop cheaper, one that strides across it dearer than a contiguous one) and the
loop-control overhead of every loop that is not unrolled; each top-level block also makes one pass
through memory over every global tensor too large for the cache (what a materialised intermediate costs).
Loops count as what the lowering makes of them on the target (``llvm``: the lowering's own CPU mapping,
``verifier.loop_mapping.map_block`` — a ``P`` or block-axis ``B`` loop is parallel unless it carries a
dependence or sits in a parallel loop, a thread-axis ``B`` such as ``tx`` is serial, a ``V`` loop is
vectorised unless it carries a dependence or sits in a vectorised loop —, and LLVM vectorises a serial
innermost loop by itself when it carries no dependence, moves contiguously and is long enough not to be
unrolled first): a parallel loop divides the work by the cores it can occupy, a vectorised innermost loop
by the lanes it fills. The constants are fixed
(not read from this machine) so a ranking is the same everywhere for the same program.

It is a heuristic to order proposals, never a claim about speed: every accepted step is still measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from leir.analysis import item_statements, loop_ranges, program_info, separates, stmt_reads, stride_along
from leir.ast import (
    Assign,
    BinOp,
    Block,
    Call,
    Expr,
    IfThenElse,
    Loop,
    Neg,
    Paren,
    Program,
    TensorRef,
    Var,
    strip_parens,
)
from leir.dtypes import dtype_bytes, tensor_nbytes
from leir.index_simplify import simplify_index
from leir.memo import IdentityMemo, memo_by_identity
from leir.rewrite import map_item_exprs, replace_refs
from verifier.loop_mapping import map_block
from verifier.targets import MODELLED_UNIT, STACK_ALLOCA_BYTES, VectorUnit, vector_unit

#: Cores a parallel loop can occupy (a common x86 server). The vector registers and their lanes come
#: from the target (``verifier.targets.vector_unit``): AVX2's 16 of 8 f32 lanes unless it has AVX-512.
CORES = 8
TRANSCENDENTAL_WEIGHT = 8.0
#: Cost of one byte moved, in operations (memory-bound kernels dominate at these sizes).
BYTE_WEIGHT = 0.25
#: Cost of one iteration of loop control (increment, compare, branch).
LOOP_OVERHEAD = 1.0
SCOPE_WEIGHT = {"g": 1.0, "s": 0.5, "l": 0.25, "r": 0.1}
#: Cost of entering a parallel loop once (waking the thread pool and joining it), in operations.
PARALLEL_ENTRY = 2000.0
#: Access weights by stride along the innermost loop: invariant (a register), contiguous, strided.
INVARIANT_WEIGHT = 0.5
STRIDED_WEIGHT = 4.0
#: A strided store weighs less than a strided load: it retires into the store buffer while the loop
#: goes on, where a load that misses stalls what uses it. Measured on the 944x512 weight transpose a
#: tuned GEMM starts with (AMD EPYC Zen 5, 2 threads): reading rows and writing columns 0.073 ms,
#: reading columns and writing rows 0.334 ms, the same bytes.
STRIDED_STORE_WEIGHT = 2.0
#: A global tensor larger than this does not stay in the last-level cache (a server's share for
#: ``CORES`` cores): every top-level block that touches it streams all of it through memory once, at
#: ``STREAM_WEIGHT`` per byte whatever its loops — the cost inlining or fusing a large intermediate
#: saves on the CPU, and the one a staging or transposing copy of a large tensor adds.
CACHE_BYTES = 16 * 1024 * 1024
STREAM_WEIGHT = 0.125
#: The shortest serial innermost loop LLVM's loop vectoriser is counted on to take by itself. Shorter
#: constant-trip loops are fully unrolled before the vectoriser runs, and the SLP vectoriser does not
#: rebuild the vector from the copies: read off the optimised IR of ``llvm`` and ``llvm-host`` builds,
#: an elementwise or ``cos`` loop of 12-32 iterations stays scalar, 56 and longer vectorise
#: (``tests/verifier/test_targets.py``). A conv3d whose 22-wide row loop was innermost ran 66 ms as
#: ``L`` and 13 ms as ``V``, where the model had seen no difference. A body that calls ``erf``, ``exp``
#: or ``log`` (some 40 operations each as ``verifier.vector_math`` lowers them) gives the SLP vectoriser
#: enough to rebuild vectors from 16 copies; the model still counts such a short loop scalar, erring on
#: the side of proposing the ``V``.
AUTO_VECTOR_MIN_EXTENT = 64
#: A core's own cache (a server core's L2). A read that an outer loop repeats, with more of its tensor
#: touched between two repeats than this holds, comes from the shared cache or memory every time: a
#: matrix product with one output row per iteration of its outer loop reads the whole weight matrix
#: per row (``L2_MISS_WEIGHT`` per byte, like a strided access). Unrolled copies that share the load
#: (``shared_load``) divide that as they divide any load: a 96x1664x1600 GEMM ran 17.1 ms a row at a
#: time and 6.6 ms six rows at a time.
L2_BYTES = 1024 * 1024
L2_MISS_WEIGHT = 4.0
#: What the copies still share once they spill (measured: a 96x1664x1600 GEMM whose row loop was split
#: by ``f`` and unrolled innermost ran 7.0 ms at f=4, 6.6 ms at 6, 9.7 ms at 8, 12 and 16, and 17.1 ms
#: unsplit — about half the reuse survives the spills).
SPILLED_SHARE = 2.0
#: The longest step between the addresses of two iterations that the hardware prefetchers follow (Intel's
#: L1 stride prefetcher takes strides up to 2 KB; its L2 streamer stays inside a 4 KB page). A register
#: tile's operand that moves further than this per step of the loop around the tile — the column panel of
#: a transposed weight, one row of it per step of the reduction — loads a line no prefetcher brought,
#: at ``PREFETCH_MISS_WEIGHT``. Measured on level1/linear_no_bias_3d (6x96x512 by 944x512, a 12x16
#: tile, Intel Xeon with AVX-512, 2 threads): 3.42 ms reading the panel from the transposed
#: ``[512, 944]`` weight, 2.29 ms from the packed ``[59, 512, 16]`` one (``pack:1:16``: 64 bytes per
#: step). The weight is half a strided load's: on AMD Zen 5 the same unpacked tile still ran 1.5x
#: faster than the rows unrolled over a vectorised column loop (6.2 against 9.4 ms, gemm_scale's GEMM),
#: and the model keeps both orders.
PREFETCH_STRIDE_BYTES = 2048
PREFETCH_MISS_WEIGHT = 2.0
TRANSCENDENTAL = frozenset({"exp", "log", "tanh", "sqrt", "rsqrt", "sin", "cos", "erf", "pow", "sigmoid",
                            "log1p", "expm1", "tan", "atan", "asin", "acos", "exp2", "log2"})


@dataclass(frozen=True)
class CostBreakdown:
    """Modelled cost (in abstract operations) and its parts, for the rationale a proposal carries."""

    total: float
    compute: float
    memory: float
    overhead: float
    #: Modelled cost of each top-level block, by block index: where a program spends its time.
    blocks: tuple[float, ...]
    #: The part of each block's cost that streams large tensors (``streamed_bytes``): no loop order
    #: changes it, only removing the block's use of the tensor does.
    streamed: tuple[float, ...]

    def share(self, block: int) -> float:
        """The fraction of the total spent in top-level block ``block``."""
        return self.blocks[block] / self.total if self.total and block < len(self.blocks) else 0.0

    def loop_share(self, block: int) -> float:
        """The fraction of the cost loop steps can change (all but the streaming) spent in ``block``:
        where looking ahead through reorders and splits can pay."""
        if block >= len(self.blocks):
            return 0.0
        rest = self.total - sum(self.streamed)
        return (self.blocks[block] - self.streamed[block]) / rest if rest > 0 else 0.0


def expr_ops(expr: Expr, transcendental: float = TRANSCENDENTAL_WEIGHT) -> float:
    """Arithmetic operations of one expression (a transcendental call weighs ``transcendental``)."""
    if isinstance(expr, BinOp):
        return 1.0 + expr_ops(expr.left, transcendental) + expr_ops(expr.right, transcendental)
    if isinstance(expr, Call):
        own = transcendental if expr.func in TRANSCENDENTAL else 1.0
        return own + sum(expr_ops(a, transcendental) for a in expr.args)
    if isinstance(expr, Neg):
        return 1.0 + expr_ops(expr.operand, transcendental)
    if isinstance(expr, Paren):
        return expr_ops(expr.inner, transcendental)
    if isinstance(expr, IfThenElse):
        return 1.0 + expr_ops(expr.then, transcendental) + expr_ops(expr.otherwise, transcendental)
    return 0.0


#: A loop nest's identity: the block path and variable of each of its loops.
_NestKey = tuple[tuple[tuple[int, ...], str], ...]


@dataclass(frozen=True)
class _Nest:
    """The loops enclosing a statement, outermost first, with what the lowering makes of each."""

    loops: tuple[Loop, ...]
    #: Per loop: ``serial``, ``parallel``, ``vector`` or ``unrolled`` (the honoured kind).
    kinds: tuple[str, ...]
    #: Which loop nest this is (block path and variable of each loop): statements of one nest share it.
    key: _NestKey


def _as_written(loops: tuple[Loop, ...]) -> tuple[str, ...]:
    """Loop kinds on a target without a modelled mapping (not ``llvm``): ``P``/``B`` parallel, ``V``
    vectorised and ``U`` unrolled as written."""
    return tuple("unrolled" if lp.kind == "U" else {"P": "parallel", "B": "parallel", "V": "vector"}.get(
        lp.kind, "serial") for lp in loops)


def _block_nests(program: Program, index: int, target: str) -> list[tuple[Assign, _Nest]]:
    """Every statement of top-level block ``index`` with its enclosing loops and what each runs as: on
    ``llvm`` the lowering's own mapping (``verifier.loop_mapping.map_block``), else as written."""
    return [(_simplified(stmt, nest.loops), nest)
            for _path, stmt, nest in _mapped_nests(program, index, target)]


def _mapped_nests(program: Program, index: int, target: str) -> list[tuple[tuple[int, ...], Assign, _Nest]]:
    """(statement path, statement, its nest) for every statement of top-level block ``index``."""
    runs_as = None
    if target.startswith("llvm"):
        runs_as = {(m.path, m.position): m.runs_as for m in map_block(program, index, target)}
    out: list[tuple[tuple[int, ...], Assign, _Nest]] = []

    def walk(item: Block | Assign, path: tuple[int, ...],
             nest: list[tuple[Loop, tuple[int, ...], int]]) -> None:
        if isinstance(item, Assign):
            loops = tuple(lp for lp, _p, _k in nest)
            key = tuple((p, lp.var) for lp, p, _k in nest)
            kinds = _as_written(loops) if runs_as is None else tuple(runs_as[(p, k)] for _lp, p, k in nest)
            out.append((path, item, _Nest(loops, kinds, key)))
            return
        inner = nest + [(lp, path, position) for position, lp in enumerate(item.loops)]
        for sub_index, sub in enumerate(item.items):
            walk(sub, path + (sub_index,), inner)

    walk(program.body.blocks[index], (index,), [])
    return out


def modelled_loop_kinds(program: Program, target: str = "llvm") -> dict[tuple[int, ...], tuple[str, ...]]:
    """What the model counts each statement's enclosing loops as (outermost first), by statement path,
    before LLVM's own vectorisation of serial innermost loops: the lowering's mapping, which
    ``tests/tuner/test_cost_mapping.py`` holds against the kernel the lowering writes."""
    return {path: nest.kinds for index in range(len(program.body.blocks))
            for path, _stmt, nest in _mapped_nests(program, index, target)}


def _simplified(stmt: Assign, loops: tuple[Loop, ...]) -> Assign:
    """``stmt`` with the floor divisions and modulos of its subscripts simplified under its loops' ranges
    (``leir.index_simplify``), as TVM simplifies them when it builds: a packed layout's ``(x*16+g)//16``
    and ``(x*16+g)%16`` read as ``x`` and ``g``, so the strides below see a contiguous tile."""
    ranges = loop_ranges(loops)

    def simpler(ref: TensorRef) -> TensorRef | None:
        indices = tuple(simplify_index(index, ranges) for index in ref.indices)
        same = all(new is old for new, old in zip(indices, ref.indices, strict=True))
        return None if same else TensorRef(ref.name, ref.dtype, ref.scope, indices)

    return map_item_exprs(stmt, lambda node: replace_refs(node, simpler))


def innermost_kept(loops: tuple[Loop, ...]) -> int:
    """The position of the innermost loop LLVM's loop passes see: the last one that is not unrolled
    (TVM unrolls ``U`` loops before LLVM runs, leaving their copies in the body of the loop around), or
    the last loop when every loop is unrolled (-1 when there are none)."""
    for position in range(len(loops) - 1, -1, -1):
        if loops[position].kind != "U":
            return position
    return len(loops) - 1


def tile_start(loops: tuple[Loop, ...]) -> int:
    """Where the register tile begins: just inside the innermost loop that is neither unrolled nor
    vectorised. TVM turns the ``U`` and ``V`` loops inside it into straight-line vector code, so one
    iteration of that loop holds every copy and lane side by side."""
    for position in range(len(loops) - 1, -1, -1):
        if loops[position].kind not in ("U", "V"):
            return position + 1
    return 0


def unrolled_copies(loops: tuple[Loop, ...]) -> tuple[Loop, ...]:
    """The unrolled loops of the register tile (``tile_start``): their copies sit side by side in one
    iteration of the loop around them, whether inside or outside the vectorised loop."""
    return tuple(lp for lp in loops[tile_start(loops):] if lp.kind == "U")


def max_sharing_copies(unit: VectorUnit = MODELLED_UNIT) -> int:
    """The most unrolled copies of an innermost loop that share a load without spilling: each copy's own
    values (its accumulator and the operand it broadcasts, hoisted out of the loop around) must fit beside
    the shared one in the target's vector registers, ``2*copies+1 <= registers``: 7 on AVX2, 15 on
    AVX-512."""
    return (unit.registers - 1) // 2


def _tile_width(loops: tuple[Loop, ...], unit: VectorUnit) -> int:
    """Vector registers one copy of the tile holds: ``ceil(lanes / unit.f32_lanes)`` of its ``V`` loop."""
    return max((math.ceil(lp.extent / unit.f32_lanes) for lp in loops[tile_start(loops):] if lp.kind == "V"),
               default=1)


def register_accumulator(ref: TensorRef, loops: tuple[Loop, ...], unit: VectorUnit = MODELLED_UNIT) -> bool:
    """Whether a local (``l``) target stays in registers for the whole loop around the tile: it does not
    move with that loop (the reduction steps over it), it moves only with the tile's loops and those
    outside, the tile of it fits ``unit``'s vector registers and its bytes the stack
    (``STACK_ALLOCA_BYTES``: a 16x16 f32 tile is a workspace buffer, measured 2.6x slower than 12x16).
    The lowering allocates such a buffer per iteration of its block's leading loops (a stack slot), so
    LLVM keeps it in registers instead of loading and storing it on every step — the accumulator of a
    register-tiled matrix product."""
    start = tile_start(loops)
    if ref.scope != "l" or start == 0:
        return False
    used = _vars(ref)
    if loops[start - 1].var in used:
        return False
    copies = math.prod(lp.extent for lp in unrolled_copies(loops) if lp.var in used)
    lanes = math.prod(lp.extent for lp in loops[start:] if lp.kind == "V" and lp.var in used)
    if copies * lanes * dtype_bytes(ref.dtype) >= STACK_ALLOCA_BYTES:
        return False
    return _tile_registers(loops, copies, unit) <= unit.registers


def shared_load(ref: TensorRef, loops: tuple[Loop, ...], unit: VectorUnit = MODELLED_UNIT) -> float:
    """How many copies of the innermost unrolled loops share one load of ``ref``: the product of the
    extents of those it does not depend on (LLVM keeps one load for identical addresses), while the
    copies fit ``unit``'s vector registers, else ``SPILLED_SHARE`` at most. This is the reuse of
    unroll-and-jam: a matrix product's row loop split, moved innermost and unrolled reads each weight
    vector once for all its rows."""
    copies = unrolled_copies(loops)
    if not copies:
        return 1.0
    used = _vars(ref)
    share = total = 1.0
    for lp in copies:
        total *= lp.extent
        if lp.var not in used:
            share *= lp.extent
    if _tile_registers(loops, total, unit) > unit.registers:
        share = min(share, SPILLED_SHARE)
    return share


def _tile_registers(loops: tuple[Loop, ...], copies: float, unit: VectorUnit) -> float:
    """Vector registers ``copies`` unrolled copies of the tile hold. Around a ``V`` loop of ``w``
    registers a copy holds its ``w`` accumulators, beside the ``w`` shared loads and one broadcast
    register they take turns with (a 6x16 f32 tile: 15); around a loop LLVM vectorises by itself, each
    copy also keeps the operand it broadcasts (``2*copies+1``, measured: 6 rows fit, 8 spill)."""
    if any(lp.kind == "V" for lp in loops[tile_start(loops):]):
        width = _tile_width(loops, unit)
        return copies * width + width + 1
    return 2 * copies + 1


def reread_weight(ref: TensorRef, loops: tuple[Loop, ...]) -> float:
    """``L2_MISS_WEIGHT`` when some loop around ``ref`` repeats it (the reference does not use the loop's
    variable) over more than ``L2_BYTES`` of the tensor per iteration — the product of the extents of
    the loops inside it the reference uses, times the element size — else 1."""
    used = _vars(ref)
    size = dtype_bytes(ref.dtype)
    footprint = float(size)
    for lp in reversed(loops):  # innermost first: the footprint grows outward
        if lp.var in used:
            footprint *= lp.extent
        elif lp.extent > 1 and footprint > L2_BYTES:
            return L2_MISS_WEIGHT
    return 1.0


def _speedup_factors(nest: _Nest, unit: VectorUnit) -> tuple[float, float]:
    parallel = 1.0
    for lp, kind in zip(nest.loops, nest.kinds, strict=True):
        if kind == "parallel":
            parallel *= lp.extent
    vector = 1.0
    inner = innermost_kept(nest.loops)
    if inner >= 0 and nest.kinds[inner] == "vector":
        vector = float(min(nest.loops[inner].extent, unit.f32_lanes))
    return min(parallel, float(CORES)), vector


def _iterations(loops: tuple[Loop, ...]) -> float:
    """How often a statement under ``loops`` runs: the product of their extents (the cost and the FLOP
    count must agree on it)."""
    iterations = 1.0
    for lp in loops:
        iterations *= lp.extent
    return iterations


def _overhead(nest: _Nest) -> tuple[float, float]:
    """(loop control, fork-joins): a parallel loop costs a fork-join each time it is entered, so the
    outermost parallel loop of a nest is the cheapest one to make parallel."""
    total, forks, trips = 0.0, 0.0, 1.0
    for lp, kind in zip(nest.loops, nest.kinds, strict=True):
        if kind == "parallel":
            forks += trips * PARALLEL_ENTRY
        trips *= lp.extent
        if kind not in ("unrolled", "vector"):
            total += trips * LOOP_OVERHEAD
    return total, forks


def _vars(expr: Expr) -> set[str]:
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, BinOp):
        return _vars(expr.left) | _vars(expr.right)
    if isinstance(expr, Paren | Neg):
        return _vars(expr.inner if isinstance(expr, Paren) else expr.operand)
    if isinstance(expr, TensorRef):
        return set().union(*(_vars(i) for i in expr.indices)) if expr.indices else set()
    return set()


def _unit_stride(expr: Expr, var: str) -> bool:
    """Whether ``expr`` moves by exactly one element per step of ``var`` (``var``, ``x*K+var``, ``var-1``)."""
    if isinstance(expr, Var):
        return expr.name == var
    if isinstance(expr, Paren):
        return _unit_stride(expr.inner, var)
    if isinstance(expr, BinOp) and expr.op in ("+", "-"):
        left, right = var in _vars(expr.left), var in _vars(expr.right)
        if left and not right:
            return _unit_stride(expr.left, var)
        if right and not left:
            return expr.op == "+" and _unit_stride(expr.right, var)
    return False


def access_weight(ref: TensorRef, loops: tuple[Loop, ...], shape: tuple[int, ...] | None, *,
                  store: bool = False) -> float:
    """How dear one access of ``ref`` is, by how it moves along the innermost non-unit loop: invariant
    (kept in a register), contiguous (a cache line serves many iterations) or strided (a line each;
    ``STRIDED_STORE_WEIGHT`` for a ``store``). A contiguous read inside a register tile weighs
    ``PREFETCH_MISS_WEIGHT`` when the loop around the tile moves it past the prefetchers' reach
    (``PREFETCH_STRIDE_BYTES``).

    With the tensor's ``shape`` the stride is read from the row-major layout (``X[c,0]`` of an ``[n,1]``
    tensor moves one element per ``c``); with ``None``, only a unit step in the last index is contiguous.
    """
    strided = STRIDED_STORE_WEIGHT if store else STRIDED_WEIGHT
    weight = _innermost_weight(ref, loops, shape, strided)
    if weight == 1.0 and not store and _strides_past_prefetch(ref, loops, shape):
        return PREFETCH_MISS_WEIGHT
    return weight


def _strides_past_prefetch(ref: TensorRef, loops: tuple[Loop, ...], shape: tuple[int, ...] | None) -> bool:
    """Whether a read inside a register tile (its innermost loop is the tile's ``V`` loop) moves more
    than ``PREFETCH_STRIDE_BYTES`` per step of the loop around the tile."""
    start = tile_start(loops)
    if shape is None or start == 0 or innermost_kept(loops) < start or len(shape) != len(ref.indices):
        return False
    step = stride_along(ref.indices, shape, loops[start - 1].var)
    return step is not None and abs(step) * dtype_bytes(ref.dtype) > PREFETCH_STRIDE_BYTES


def _innermost_weight(ref: TensorRef, loops: tuple[Loop, ...], shape: tuple[int, ...] | None,
                      strided: float) -> float:
    """``access_weight`` along the innermost loop alone."""
    kept = loops[:innermost_kept(loops) + 1]
    inner = next((lp.var for lp in reversed(kept) if lp.extent > 1), None)
    if inner is None or not ref.indices:
        return INVARIANT_WEIGHT
    using = [i for i, idx in enumerate(ref.indices) if inner in _vars(idx)]
    if not using:
        return INVARIANT_WEIGHT
    last = len(ref.indices) - 1
    if using == [last] and _unit_stride(ref.indices[last], inner):
        return 1.0
    if shape is not None and len(shape) == len(ref.indices) and all(n == 1 for n in shape[using[-1] + 1:]):
        step = stride_along(ref.indices, shape, inner)  # only unit dimensions follow: maybe contiguous
        if step is not None:
            return INVARIANT_WEIGHT if step == 0 else 1.0 if abs(step) == 1 else strided
    return strided


def _auto_vectorisable(stmt: Assign, loops: tuple[Loop, ...], shapes: dict[str, tuple[int, ...]]) -> bool:
    """Whether LLVM's loop vectoriser takes the serial innermost loop around ``stmt`` by itself.

    It does when the loop carries no dependence and every access moves contiguously or not at all:
    the target is indexed by the loop variable with unit stride in its last index (so the loop is no
    reduction into one element — LLVM keeps float sums in order), every read of the target tensor is
    the target element itself or one the loop variable keeps apart from it (``M[f,d] = M[f-1,d] + …``
    over ``d``: a scan along an outer loop; not ``C[i] = C[i-1] + …`` over ``i``), every other read is
    contiguous or invariant. No call keeps it out: ``exp``, ``log``, ``sqrt``, ``abs``, ``sin``, ``cos``,
    ``max``, ``min`` and ``erf`` (``verifier.vector_math``) all lower to what LLVM vectorises, read off
    the IR of llvm and llvm-host builds (``tests/verifier/test_targets.py``). The source programs' matmuls
    fail the first test; after a reorder that puts a spatial loop innermost they pass, which is where
    most of a CPU kernel's speedup comes from.
    """
    inner = loops[innermost_kept(loops)].var
    target = stmt.target
    if not target.indices or inner not in _vars(target.indices[-1]) \
            or access_weight(target, loops, shapes.get(target.name)) != 1.0:
        return False
    if any(inner in _vars(i) for i in target.indices[:-1]):
        return False
    for ref in stmt_reads(stmt):
        if ref.name == target.name:
            if ref.indices != target.indices and not separates(inner, (target.indices, ref.indices)):
                return False
        elif access_weight(ref, loops, shapes.get(ref.name)) == STRIDED_WEIGHT:
            return False
    return True


def _with_auto_vector(nests: list[tuple[Assign, _Nest]], target: str,
                      shapes: dict[str, tuple[int, ...]]) -> list[tuple[Assign, _Nest]]:
    """``nests`` with the innermost serial loop of each nest marked ``vector`` where LLVM vectorises it
    by itself (``_auto_vectorisable`` holds for every statement directly under it, and the loop runs at
    least ``AUTO_VECTOR_MIN_EXTENT`` iterations)."""
    if not target.startswith("llvm"):
        return nests
    able: dict[_NestKey, bool] = {}
    for stmt, nest in nests:
        inner = innermost_kept(nest.loops)
        if inner >= 0 and nest.kinds[inner] == "serial" \
                and nest.loops[inner].extent >= AUTO_VECTOR_MIN_EXTENT and "vector" not in nest.kinds:
            able[nest.key] = able.get(nest.key, True) and _auto_vectorisable(stmt, nest.loops, shapes)
    out = []
    for stmt, nest in nests:
        if able.get(nest.key):
            inner = innermost_kept(nest.loops)
            nest = _Nest(nest.loops, (*nest.kinds[:inner], "vector", *nest.kinds[inner + 1:]), nest.key)
        out.append((stmt, nest))
    return out


def tensor_shapes(program: Program) -> dict[str, tuple[int, ...]]:
    """Every tensor's shape, intermediates included, as the checker inferred them."""
    return {name: tensor.shape for name, tensor in program_info(program).tensors.items()}


def streamed_bytes(ref: TensorRef, shape: tuple[int, ...] | None) -> int:
    """The bytes a block that touches ``ref`` streams through memory for it however its loops run: the
    whole tensor when it is global and larger than ``CACHE_BYTES``, else nothing."""
    if ref.scope != "g" or shape is None:
        return 0
    size = tensor_nbytes(ref.dtype, shape)
    return size if size > CACHE_BYTES else 0


@dataclass(frozen=True)
class _BlockCost:
    """One top-level block's share of ``program_cost``."""

    compute: float
    memory: float
    overhead: float
    #: What streaming its large global tensors costs (already in ``memory``).
    streamed: float

    @property
    def total(self) -> float:
        return self.compute + self.memory + self.overhead


def stack_slots(block: Block, shapes: dict[str, tuple[int, ...]]) -> frozenset[str]:
    """The ``s``/``l`` tensors of ``block`` that the CPU lowering allocates per iteration of the block's
    leading loops, under ``STACK_ALLOCA_BYTES`` a slice: its private copies (``verifier.lowering``,
    ``_private_copy``: every reference indexes the tensor's first ``k`` dimensions with exactly the
    variables of the block's first ``k`` loops). Every other on-chip tensor is one buffer in memory on the
    CPU, as dear as a global one: a 2 KB row staged per iteration of a 944-row copy is a 1.9 MB buffer
    written and read again (measured 0.32 ms against 0.12 ms unstaged, Intel Xeon, 2 threads). Unlike the
    lowering the model does not look for references in other blocks (a private copy has none)."""
    refs: dict[str, list[TensorRef]] = {}
    for _path, stmt, _loops in item_statements(block):
        for ref in (*stmt_reads(stmt), stmt.target):
            if ref.scope in ("s", "l"):
                refs.setdefault(ref.name, []).append(ref)
    kept = set()
    for name, found in refs.items():
        shape = shapes.get(name)
        if shape is None:
            continue
        k = 0
        while k < min(len(block.loops), len(shape)) and all(
                isinstance(index := strip_parens(ref.indices[k]), Var) and index.name == block.loops[k].var
                for ref in found):
            k += 1
        if k and tensor_nbytes(found[0].dtype, shape[k:]) < STACK_ALLOCA_BYTES:
            kept.add(name)
    return frozenset(kept)


@memo_by_identity(4096)
def _block_layout(block: Block) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    """(tensors the block touches, its statements' paths relative to it): what its cost depends on
    outside the block itself, besides the target."""
    names: dict[str, None] = {}
    paths = []
    for rel, stmt, _loops in item_statements(block):
        paths.append(rel)
        for ref in (*stmt_reads(stmt), stmt.target):
            names[ref.name] = None
    return tuple(names), tuple(paths)


#: Block costs kept per block object and what they depend on outside it (``_block_cost``).
_BLOCK_COSTS: IdentityMemo[Block, _BlockCost] = IdentityMemo(8192)


def _block_cost(program: Program, index: int, target: str, shapes: dict[str, tuple[int, ...]]) -> _BlockCost:
    """The modelled cost of top-level block ``index``. A block's cost depends on the block, the target,
    the shapes of the tensors it touches and the checker's kind of each of its statements (a reduction
    or a recurrence keeps a loop serial), so it is kept per block object under exactly those: most
    candidate steps rewrite one block of many, and a policy call costs every candidate's program."""
    block = program.body.blocks[index]
    names, paths = _block_layout(block)
    statements = program_info(program).statements
    kinds = tuple(getattr(statements.get((index, *rel)), "kind", None) for rel in paths)
    extra = (target, tuple(shapes.get(name) for name in names), kinds)
    kept = _BLOCK_COSTS.get(block, extra)
    if kept is not None:
        return kept
    compute = memory = overhead = 0.0
    counted: set[_NestKey] = set()
    streamed: dict[str, int] = {}  # the large tensors touched
    unit = vector_unit(target)
    on_chip = stack_slots(block, shapes) if target.startswith("llvm") else None
    for stmt, nest in _with_auto_vector(_block_nests(program, index, target), target, shapes):
        iterations = _iterations(nest.loops)
        parallel, vector = _speedup_factors(nest, unit)
        touched = 0.0
        in_registers = register_accumulator(stmt.target, nest.loops, unit)
        for r in (*stmt_reads(stmt), stmt.target):
            shape = shapes.get(r.name)
            if in_registers and r.name == stmt.target.name and r.indices == stmt.target.indices:
                touched += dtype_bytes(r.dtype) * SCOPE_WEIGHT["r"] * INVARIANT_WEIGHT
                continue
            share = 1.0 if r is stmt.target else shared_load(r, nest.loops, unit)
            scope = r.scope if on_chip is None or r.name in on_chip else "g"
            touched += dtype_bytes(r.dtype) * SCOPE_WEIGHT.get(scope, 1.0) \
                * access_weight(r, nest.loops, shape, store=r is stmt.target) * reread_weight(r, nest.loops) \
                / share
            if r.name not in streamed:
                streamed[r.name] = streamed_bytes(r, shape)
        compute += iterations * expr_ops(stmt.value) / (parallel * vector)
        memory += iterations * touched * BYTE_WEIGHT / (parallel * vector)
        if nest.key not in counted:  # statements of one nest share its loop control
            counted.add(nest.key)
            loops, forks = _overhead(nest)
            overhead += loops / parallel + forks
    streaming = sum(streamed.values()) * STREAM_WEIGHT
    return _BLOCK_COSTS.put(block, _BlockCost(compute, memory + streaming, overhead, streaming), extra)


def program_cost(program: Program, target: str = "llvm") -> CostBreakdown:
    """The modelled cost of running ``program`` once on ``target`` (``llvm``: the CPU loop mapping)."""
    shapes = tensor_shapes(program)
    parts = [_block_cost(program, index, target, shapes) for index in range(len(program.body.blocks))]
    compute = sum(part.compute for part in parts)
    memory = sum(part.memory for part in parts)
    overhead = sum(part.overhead for part in parts)
    return CostBreakdown(compute + memory + overhead, compute, memory, overhead,
                         tuple(part.total for part in parts), tuple(part.streamed for part in parts))


def program_flops(program: Program) -> float:
    """Arithmetic operations of one run (each binary op, negation and call counts one): ``2*M*N*K``
    for a matrix product written ``C = C + A*B``, the figure GFLOP/s are quoted in."""
    total = 0.0
    for block in program.body.blocks:
        for _path, stmt, loops in item_statements(block):
            total += _iterations(loops) * expr_ops(stmt.value, transcendental=1.0)
    return total

