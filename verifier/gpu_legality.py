"""What the cuda lowering refuses: programs that would race, break a GPU limit or lose on-chip memory.

Each check raises the ``LoweringError`` (or ``GpuLimitError``) the lowering reports, naming the
statement, loop or tensor: a dependence across a bound loop other than TVM's cross-thread reduction
(``check_races``), a cross-thread reduction TVM cannot build (``check_cross_thread``), the launch limits
(``check_gpu_limits``, via ``leir.gpu_limits``, the function ``loop_binding`` checks too), and on-chip
tensors shared by two launches or needing a whole-tensor fill inside their kernel.
"""

from __future__ import annotations

from leir import ast as A
from leir.analysis import carried_vars
from leir.gpu_limits import gpu_limit_violations, thread_tag
from leir.printer import canonical, loop_text
from leir.semantics import ProgramInfo, StmtKind
from verifier.errors import GpuLimitError, LoweringError
from verifier.loop_mapping import path_label


def check_gpu_limits(program: A.Program, info: ProgramInfo) -> None:
    """Raise ``GpuLimitError`` for the first CUDA limit a top-level block breaks."""
    for block in program.body.blocks:
        for violation in gpu_limit_violations(block, info.tensors):
            raise GpuLimitError(violation.message, loop=violation.loop, limit=violation.limit)


def check_one_kernel(name: str, scope: str, owners: list[int]) -> None:
    """An on-chip tensor lives in one launch: raise when more than one top-level block uses it."""
    if len(owners) > 1:
        raise LoweringError(
            f"{'shared' if scope == 's' else 'local'} tensor {name} is used by top-level "
            f"blocks {', '.join(map(str, owners))}: on cuda each top-level block is its own "
            "kernel launch and on-chip memory does not survive it")


def check_no_on_chip_fill(name: str, label: str, on_chip: set[str]) -> None:
    """A whole-tensor fill runs in its own launch, where an on-chip tensor of another kernel is not."""
    if name in on_chip:
        raise LoweringError(
            f"on-chip tensor {name} would need a whole-tensor fill ({label}) inside its kernel; write "
            "every element explicitly (or use global scope)")


def check_races(info: ProgramInfo, stmt: A.Assign, path: tuple[int, ...], loops: tuple[A.Loop, ...],
                use_init: bool) -> None:
    """Raise when the statement depends on itself across a GPU-bound loop in a way cuda cannot run."""
    kind = info.statements[path].kind
    races = set(carried_vars(stmt, loops, kind))
    scope = info.tensors[stmt.target.name].scope
    if scope in ("s", "l"):
        # shared is private to a block, local to a thread: a plain write along such an axis is each
        # copy's own, but a dependence carried along it (sequentially one tensor) would be split
        private = {lp.var for lp in loops if lp.kind == "B" and lp.var in races
                   and (scope == "l" or thread_tag(lp.var).startswith("blockIdx"))}
        if private and kind is not StmtKind.ASSIGN:
            var = sorted(private)[0]
            raise LoweringError(
                f"statement {canonical(stmt)} (at {path_label(path)}) carries {stmt.target.name} along the "
                f"loop over {var}, but a {'shared' if scope == 's' else 'local'} tensor has one copy per "
                f"{'block' if scope == 's' else 'thread'} on cuda; index it by {var} or use global scope")
        races -= private
    reads = {v.name for v in A.walk_expr(stmt.value) if isinstance(v, A.Var)}
    reads |= {v.name for r in A.tensor_refs(stmt.value) for i in r.indices
              for v in A.walk_expr(i) if isinstance(v, A.Var)}
    for lp in loops:
        if lp.kind != "B" or lp.var not in races:
            continue
        tag = thread_tag(lp.var)
        where = f"statement {canonical(stmt)} (at {path_label(path)})"
        if kind is StmtKind.REDUCE and use_init and tag.startswith("threadIdx"):
            check_cross_thread(info, path, loops, where, lp)
            continue  # TVM's cross-thread reduction
        if kind is StmtKind.ASSIGN and lp.var not in reads:
            continue  # every thread writes the same value
        raise LoweringError(
            f"{where} depends across the GPU-bound loop {loop_text(lp)} ({tag}): its iterations "
            "would race on cuda")


def check_cross_thread(info: ProgramInfo, path: tuple[int, ...], loops: tuple[A.Loop, ...], where: str,
                       lp: A.Loop) -> None:
    """TVM's cross-thread reduction needs a known reducer and the reduce loops innermost."""
    sinfo = info.statements[path]
    if sinfo.combiner not in ("+", "*", "max", "min"):
        raise LoweringError(f"{where} reduces with '{sinfo.combiner}' over the thread-bound loop "
                            f"{loop_text(lp)}; cuda cross-thread reduction supports + * max min")
    reduce_vars = set(sinfo.reduce_vars)
    first_reduce = min(k for k, loop in enumerate(loops) if loop.var in reduce_vars)
    if any(loop.var not in reduce_vars for loop in loops[first_reduce:]):
        raise LoweringError(f"{where} reduces over the thread-bound loop {loop_text(lp)} outside a "
                            "spatial loop; cuda cross-thread reduction needs the reduce loops innermost")
