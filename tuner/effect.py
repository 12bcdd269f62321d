"""The features of a program a step's estimated effect compares (``dataset.effects``), from the cost model.

Read off the loop mapping ``tuner.cost`` models for the target (the lowering's: which loops run parallel,
vectorised, unrolled), per program:

* ``bytes_moved``: bytes every statement reads and writes over one run; an access that does not move
  with the innermost loop (kept in a register) counts once per iteration of the loops around it;
* ``reuse_per_element``: ``bytes_moved`` over the bytes of the distinct tensors touched — how often each
  element is touched (1.0: read once, staging it buys nothing);
* ``innermost_stride``: in the hottest statement (most executions), the largest step in elements that one
  of its accesses takes per iteration of the innermost loop (1 = contiguous, 0 = nothing moves);
* ``parallel_width``: the product of the extents of the hottest statement's loops that run in parallel;
* ``vector_width``: the lanes its innermost loop fills when vectorised (1 when scalar);
* ``work``: arithmetic operations of one run (``cost.program_flops``);
* ``model_seconds``: the modelled cost (``cost.program_cost``) at ``SECONDS_PER_OPERATION`` — a scale for
  comparing a parent with its child, not a prediction of a run's time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from leir.analysis import stmt_reads, stride_along
from leir.ast import Program
from leir.dtypes import dtype_bytes
from tuner import cost
from verifier.targets import vector_unit

#: One modelled operation, in seconds (a 1 GHz scalar core's instruction).
SECONDS_PER_OPERATION = 1e-9


def program_features(program: Program, target: str = "llvm") -> dict[str, Any]:
    """The ``FEATURE_KEYS`` of ``program`` on ``target`` (module docstring)."""
    shapes = cost.tensor_shapes(program)
    unit = vector_unit(target)
    moved = 0.0
    touched: dict[str, int] = {}
    hottest: tuple[float, Any, Any] | None = None
    for index in range(len(program.body.blocks)):
        nests = cost._with_auto_vector(cost._block_nests(program, index, target), target, shapes)
        for stmt, nest in nests:
            iterations = math.prod(lp.extent for lp in nest.loops)
            inner = cost.innermost_kept(nest.loops)
            inner_extent = nest.loops[inner].extent if inner >= 0 else 1
            for ref in (*stmt_reads(stmt), stmt.target):
                size = dtype_bytes(ref.dtype)
                weight = cost.access_weight(ref, nest.loops, shapes.get(ref.name))
                executions = iterations / inner_extent if weight == cost.INVARIANT_WEIGHT else iterations
                moved += executions * size
                if ref.name in shapes:
                    touched[ref.name] = size * math.prod(shapes[ref.name])
            if hottest is None or iterations > hottest[0]:
                hottest = (iterations, stmt, nest)
    stride = parallel = vector = 1
    if hottest is not None:
        _iterations, stmt, nest = hottest
        stride = _innermost_stride(stmt, nest.loops, shapes)
        parallel = math.prod(lp.extent for lp, kind in zip(nest.loops, nest.kinds, strict=True)
                             if kind == "parallel")
        inner = cost.innermost_kept(nest.loops)
        if inner >= 0 and nest.kinds[inner] == "vector":
            vector = min(nest.loops[inner].extent, unit.f32_lanes)
    distinct = sum(touched.values())
    total = cost.program_cost(program, target).total
    return {"bytes_moved": int(moved), "reuse_per_element": _round(moved / distinct if distinct else 0.0),
            "innermost_stride": stride, "parallel_width": max(1, parallel), "vector_width": max(1, vector),
            "work": int(cost.program_flops(program)), "model_seconds": _round(total * SECONDS_PER_OPERATION)}


def _innermost_stride(stmt: Any, loops: tuple[Any, ...], shapes: dict[str, tuple[int, ...]]) -> int:
    """The largest step (elements) an access of ``stmt`` takes per iteration of its innermost loop."""
    kept = loops[:cost.innermost_kept(loops) + 1]
    inner = next((lp.var for lp in reversed(kept) if lp.extent > 1), None)
    if inner is None:
        return 0
    largest = 0
    for ref in (*stmt_reads(stmt), stmt.target):
        shape = shapes.get(ref.name)
        if shape is None or len(shape) != len(ref.indices):
            continue
        step = stride_along(ref.indices, shape, inner)
        if step is None:  # not affine in the loop: as far as a line away
            step = math.prod(shape[1:]) if len(shape) > 1 else 1
        largest = max(largest, abs(step))
    return largest


def feature_function(target: str) -> Callable[[Program], dict[str, Any]]:
    """``program_features`` bound to ``target``: what ``steptp generate`` hands the generator."""
    return lambda program: program_features(program, target)


def _round(value: float) -> float:
    return float(f"{value:.6g}")
