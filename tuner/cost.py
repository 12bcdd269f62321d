"""A static cost model of a LEIR program: what ``RulePolicy`` ranks candidate steps by.

No measurement, no TVM: the model counts, per statement, the iterations of its loop nest, the arithmetic
of its right-hand side (a transcendental call weighs ``TRANSCENDENTAL_WEIGHT`` operations), the bytes it
touches per iteration (global tensors at full weight, staged ``s``/``l`` scopes cheaper), and the
loop-control overhead of every loop that is not unrolled. Parallel (``P``/``B``) loops divide the work by
the cores they can occupy, a vectorised ``V`` loop divides it by the vector lanes it fills. The constants
are fixed (not read from this machine) so a ranking is the same everywhere for the same program.

It is a heuristic to order proposals, never a claim about speed: every accepted step is still measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from leir.analysis import item_statements, stmt_reads
from leir.ast import BinOp, Call, Expr, IfThenElse, Loop, Neg, Paren, Program

#: Cores a parallel loop can occupy and f32 lanes of one vector register (a common x86 server core).
CORES = 8
VECTOR_LANES = 8
TRANSCENDENTAL_WEIGHT = 8.0
#: Cost of one byte moved, in operations (memory-bound kernels dominate at these sizes).
BYTE_WEIGHT = 0.25
#: Cost of one iteration of loop control (increment, compare, branch).
LOOP_OVERHEAD = 1.0
SCOPE_WEIGHT = {"g": 1.0, "s": 0.5, "l": 0.25, "r": 0.1}
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i16": 2, "i32": 4, "i64": 8,
               "bool": 1}
TRANSCENDENTAL = frozenset({"exp", "log", "tanh", "sqrt", "rsqrt", "sin", "cos", "erf", "pow", "sigmoid",
                            "log1p", "expm1", "tan", "atan", "asin", "acos", "exp2", "log2"})


@dataclass(frozen=True)
class CostBreakdown:
    """Modelled cost (in abstract operations) and its parts, for the rationale a proposal carries."""

    total: float
    compute: float
    memory: float
    overhead: float


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


def _speedup_factors(loops: tuple[Loop, ...]) -> tuple[float, float]:
    parallel = 1.0
    for lp in loops:
        if lp.kind in ("P", "B"):
            parallel *= lp.extent
    vector = 1.0
    if loops and loops[-1].kind == "V":
        vector = float(min(loops[-1].extent, VECTOR_LANES))
    return min(parallel, float(CORES)), vector


def _iterations(loops: tuple[Loop, ...]) -> float:
    """How often a statement under ``loops`` runs: the product of their extents (the cost and the FLOP
    count must agree on it)."""
    iterations = 1.0
    for lp in loops:
        iterations *= lp.extent
    return iterations


def _overhead(loops: tuple[Loop, ...]) -> float:
    total, trips = 0.0, 1.0
    for lp in loops:
        trips *= lp.extent
        if lp.kind not in ("U", "V"):
            total += trips * LOOP_OVERHEAD
    return total


def program_cost(program: Program) -> CostBreakdown:
    """The modelled cost of running ``program`` once."""
    compute = memory = overhead = 0.0
    for block in program.body.blocks:
        counted: set[tuple[Loop, ...]] = set()
        for _path, stmt, loops in item_statements(block):
            iterations = _iterations(loops)
            parallel, vector = _speedup_factors(loops)
            refs = (*stmt_reads(stmt), stmt.target)
            touched = sum(DTYPE_BYTES.get(r.dtype, 4) * SCOPE_WEIGHT.get(r.scope, 1.0) for r in refs)
            compute += iterations * expr_ops(stmt.value) / (parallel * vector)
            memory += iterations * touched * BYTE_WEIGHT / (parallel * vector)
            if loops not in counted:  # statements of one nest share its loop control
                counted.add(loops)
                overhead += _overhead(loops) / parallel
    return CostBreakdown(compute + memory + overhead, compute, memory, overhead)


def program_flops(program: Program) -> float:
    """Arithmetic operations of one run (each binary op, negation and call counts one): ``2*M*N*K``
    for a matrix product written ``C = C + A*B``, the figure GFLOP/s are quoted in."""
    total = 0.0
    for block in program.body.blocks:
        for _path, stmt, loops in item_statements(block):
            total += _iterations(loops) * expr_ops(stmt.value, transcendental=1.0)
    return total

