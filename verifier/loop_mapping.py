"""What each loop of a LEIR program runs as on a target: the lowering's loop mapping, as plain data.

One pure function, ``map_block``, decides it for the loops of one top-level block; the lowering emits
what it says (``verifier.emit_tir``) and the tuner's cost model counts what it says (``tuner.cost``), so
the model can never disagree with the kernel about which loop runs parallel or vectorised
(``tests/tuner/test_cost_mapping.py`` holds the two to each other). No TVM here: the tuner imports it.

The rules (``docs/leir.md``, ``verifier.lowering``): ``L`` serial, ``U`` unrolled, ``P`` parallel and
``V`` vectorised unless the loop is a race axis (``leir.analysis.loop_race_reason``), ``V`` also not
inside another vectorised loop, ``P`` not inside another parallel loop (LLVM runs one level). ``B`` on
the CPU: block axes (``b<x|y|z>…``) parallel unless a race axis or inside a parallel loop, thread axes
serial. On cuda ``B`` binds its thread axis, loops around a launch run on the host serially, ``P`` is
serial and ``V`` is vectorised only for widths CUDA has vector types for. Every ``P``/``V``/``B`` loop
that does not run as its kind says carries the reason, which the lowering reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from leir import ast as A
from leir.analysis import loop_race_reason, program_info
from leir.gpu_limits import all_loops, thread_tag
from leir.printer import loop_text
from leir.semantics import ProgramInfo
from verifier import targets as tg

RunsAs = Literal["serial", "parallel", "vector", "unrolled", "bound"]


@dataclass(frozen=True)
class UnhonouredLoop:
    """A loop whose kind the lowering did not honour: its LEIR text, its block path, and the reason."""

    loop: str
    path: tuple[int, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"loop": self.loop, "path": list(self.path), "reason": self.reason}


@dataclass(frozen=True)
class MappedLoop:
    """What one loop runs as: the loop at ``position`` of the header of the block at ``path``."""

    path: tuple[int, ...]
    position: int
    loop: A.Loop
    runs_as: RunsAs
    #: The CUDA axis a ``bound`` loop binds (``blockIdx.x`` …), else empty.
    thread: str = ""
    #: Why a ``P``/``V``/``B`` loop does not run as its kind says (reported as an ``UnhonouredLoop``).
    reason: str | None = None
    #: Why the loop cannot be lowered at all (a cuda axis bound twice): the lowering raises it there.
    error: str | None = None

    def unhonoured(self) -> UnhonouredLoop | None:
        return None if self.reason is None else UnhonouredLoop(loop_text(self.loop), self.path, self.reason)


def map_block(program: A.Program, index: int, target: str | dict[str, Any],
              info: ProgramInfo | None = None) -> tuple[MappedLoop, ...]:
    """Every loop of top-level block ``index`` (nested blocks included, in program order) and what the
    lowering for ``target`` makes of it. ``info``: the program's checker facts (default: computed)."""
    info = info if info is not None else program_info(program)
    mapper = _Mapper(program, info, tg.is_gpu(target))
    block = program.body.blocks[index]
    tags = ("kernel",) if mapper.gpu and not any(lp.kind == "B" for lp in all_loops(block)) else ()
    mapper.block(block, (index,), in_parallel=False, tags=tags)
    return tuple(mapper.out)


def map_program(program: A.Program, target: str | dict[str, Any],
                info: ProgramInfo | None = None) -> tuple[MappedLoop, ...]:
    """``map_block`` over every top-level block."""
    info = info if info is not None else program_info(program)
    return tuple(mapped for index in range(len(program.body.blocks))
                 for mapped in map_block(program, index, target, info))


def path_label(path: tuple[int, ...]) -> str:
    """A block or statement path as it appears in block labels and messages (``0_2_1``)."""
    return "_".join(str(p) for p in path)


class _Mapper:
    """Walks one top-level block as the lowering emits it, carrying what the loops around decide."""

    def __init__(self, program: A.Program, info: ProgramInfo, gpu: bool) -> None:
        self.program = program
        self.info = info
        self.gpu = gpu
        self.out: list[MappedLoop] = []
        self._loop_refs: dict[A.Loop, list[A.TensorRef]] | None = None

    def block(self, block: A.Block, path: tuple[int, ...], *, in_parallel: bool,
              tags: tuple[str, ...]) -> None:
        for position, loop in enumerate(block.loops):
            mapped = self._loop(loop, path, position, in_parallel, tags)
            self.out.append(mapped)
            in_parallel = in_parallel or mapped.runs_as == "parallel"
            tag = _tag(mapped)
            if tag:
                tags = tags + (tag,)
        for i, item in enumerate(block.items):
            if isinstance(item, A.Block):
                self.block(item, path + (i,), in_parallel=in_parallel, tags=tags)

    def _loop(self, loop: A.Loop, path: tuple[int, ...], position: int, in_parallel: bool,
              tags: tuple[str, ...]) -> MappedLoop:
        def runs(runs_as: RunsAs, reason: str | None = None, *, thread: str = "",
                 error: str | None = None) -> MappedLoop:
            return MappedLoop(path, position, loop, runs_as, thread, reason, error)

        if loop.kind == "L":
            return runs("serial")
        if self.gpu and loop.kind != "B" and not tags:
            # a host loop around kernel launches: TVM cannot unroll or vectorise those, so it is serial
            return runs("serial", "a host loop around a kernel launch runs serially")
        if loop.kind == "U":
            return runs("unrolled")
        if loop.kind == "V":
            # one vectorised level per nest, never along a dependence (lanes would race); on cuda only
            # widths CUDA has vector types for
            race = self._race(path, loop)
            if race:
                return runs("serial", race)
            if any(tag.startswith("vector:") for tag in tags):
                return runs("serial", "an enclosing loop is already vectorised")
            if self.gpu and not self._cuda_vector_ok(loop):
                return runs("serial", "cuda has no vector type of this width and dtype")
            return runs("vector")
        if loop.kind == "P":
            if self.gpu:
                return runs("serial", "P runs serially inside a cuda kernel")
            race = self._race(path, loop)
            if race:
                return runs("serial", race)
            if in_parallel:
                return runs("serial", "nested inside a parallel loop (LLVM runs one level)")
            return runs("parallel")
        # B
        tag = thread_tag(loop.var)
        if self.gpu:
            if tag in tags:
                return runs("bound", thread=tag,
                            error=f"loop {loop_text(loop)} binds {tag} again inside a loop bound to it")
            return runs("bound", thread=tag)
        if not tag.startswith("blockIdx"):
            return runs("serial")  # the documented CPU mapping: thread axes run serially
        race = self._race(path, loop)
        if race:
            return runs("serial", race)
        if in_parallel:
            return runs("serial")  # the documented CPU mapping: one parallel level, the outermost
        return runs("parallel")

    def _race(self, path: tuple[int, ...], loop: A.Loop) -> str | None:
        return loop_race_reason(self.program, path, loop.var, self.info)

    def _cuda_vector_ok(self, loop: A.Loop) -> bool:
        if self._loop_refs is None:
            self._loop_refs = {}
            for _, stmt, loops in A.statements(self.program.body):
                for lp in loops:
                    self._loop_refs.setdefault(lp, []).extend(stmt_refs(stmt))
        bits = {"f32": 32, "i32": 32, "u32": 32, "f64": 64, "i64": 64, "u64": 64}
        dtypes = {self.info.tensors[r.name].dtype for r in self._loop_refs.get(loop, ())}
        if not dtypes or any(d not in bits for d in dtypes):
            return False
        return loop.extent in (2, 4) and loop.extent * max(bits[d] for d in dtypes) <= 128


def _tag(mapped: MappedLoop) -> str:
    """What a loop adds to the tags the loops inside it see: ``vector:<var>`` or the bound axis."""
    if mapped.runs_as == "vector":
        return f"vector:{mapped.loop.var}"
    return mapped.thread


def stmt_refs(stmt: A.Assign) -> Iterator[A.TensorRef]:
    """Every tensor reference of a statement: its target, the reads in its subscripts, the value's."""
    yield from A.tensor_refs(stmt.target)
    yield from A.tensor_refs(stmt.value)
