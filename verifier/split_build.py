"""Building a long program as several functions, so that build time grows linearly with its length.

LLVM's optimiser is superlinear in the size of one function, and the lowering emits one ``main`` per
program: a whole MobileNetV2 (hundreds of top-level blocks) took 80–110 s to build. Here the program is
cut between top-level blocks into groups of about ``group_blocks`` blocks; each group becomes a LEIR
program of its own — the tensors it reads from earlier groups (or the signature) are its inputs, the
tensors later groups or the caller read are its outputs — and is lowered and built on its own. Running
the parts in order, passing the arrays between them, computes exactly what the whole program computes:
a cut is only made where no tensor written before it is written after it (so no part needs another's
partial result or reduction init), and only global-scope tensors cross a cut.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from leir import ast as A
from leir.semantics import ProgramInfo

if TYPE_CHECKING:
    from verifier.lowering import Param

#: Programs with more top-level blocks than this are built in parts by default (``build(split=...)``).
DEFAULT_GROUP_BLOCKS = 48


def _written(item: A.Item) -> set[str]:
    if isinstance(item, A.Assign):
        return {item.target.name}
    return set().union(*(_written(i) for i in item.items)) if item.items else set()


def _read(item: A.Item) -> set[str]:
    if isinstance(item, A.Assign):
        names = {r.name for r in A.tensor_refs(item.value)}
        names |= {r.name for idx in item.target.indices for r in A.tensor_refs(idx)}
        return names
    return set().union(*(_read(i) for i in item.items)) if item.items else set()


def _refs_scopes(item: A.Item, scopes: dict[str, set[str]]) -> None:
    if isinstance(item, A.Assign):
        for ref in (item.target, *A.tensor_refs(item.value)):
            scopes.setdefault(ref.name, set()).add(ref.scope)
        return
    for i in item.items:
        _refs_scopes(i, scopes)


def groups(program: A.Program, group_blocks: int) -> list[list[int]]:
    """Top-level block indices in consecutive groups of at least ``group_blocks`` (the last may be
    shorter), cut only where it is safe (see the module docstring)."""
    blocks = program.body.blocks
    written = [_written(b) for b in blocks]
    scopes: dict[str, set[str]] = {}
    for b in blocks:
        _refs_scopes(b, scopes)
    later_writes: list[set[str]] = [set() for _ in blocks]
    acc: set[str] = set()
    for i in range(len(blocks) - 1, -1, -1):
        later_writes[i] = set(acc)
        acc |= written[i]
    out: list[list[int]] = [[]]
    before: set[str] = set()
    for i in range(len(blocks)):
        out[-1].append(i)
        before |= written[i]
        crossing_local = any(scopes.get(n, {"g"}) != {"g"} for n in before)
        safe = not (before & later_writes[i]) and not crossing_local
        if len(out[-1]) >= group_blocks and safe and i + 1 < len(blocks):
            out.append([])
    return out


@dataclass
class Part:
    """One group as a program of its own."""

    program: A.Program
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def split_program(program: A.Program, info: ProgramInfo, group_blocks: int) -> list[Part]:
    blocks = program.body.blocks
    sig = {d.name: d for d in program.signature.tensors}
    index_groups = groups(program, group_blocks)
    reads = [set().union(*(_read(blocks[i]) for i in g)) for g in index_groups]
    writes = [set().union(*(_written(blocks[i]) for i in g)) for g in index_groups]
    final_outputs = {d.name for d in program.signature.tensors if d.role == "output"}
    parts = []
    for k, g in enumerate(index_groups):
        needed_later = set().union(*reads[k + 1:]) if k + 1 < len(reads) else set()
        ins = sorted(n for n in reads[k] - writes[k])
        outs = sorted(n for n in writes[k] if n in final_outputs or n in needed_later)
        decls = []
        order = {name: i for i, name in enumerate(info.tensors)}
        for name in sorted(ins, key=order.__getitem__):
            t = info.tensors[name]
            role = sig[name].role if name in sig and sig[name].role != "output" else "input"
            decls.append(A.TensorDecl(name, role, t.dtype, tuple(t.shape)))
        decls.sort(key=lambda d: A.ROLES.index(d.role))
        for name in sorted(outs, key=order.__getitem__):
            t = info.tensors[name]
            decls.append(A.TensorDecl(name, "output", t.dtype, tuple(t.shape)))
        body = A.Body(tuple(blocks[i] for i in g))
        parts.append(Part(A.Program(A.Signature(tuple(decls)), body), tuple(ins), tuple(outs)))
    return parts


class PartKernel(Protocol):
    """What a part is built as: a ``verifier.build.Kernel``, named by its shape because ``build``
    imports this module."""

    target: dict[str, Any]
    versions: dict[str, str]

    def run(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    def time(self, arrays: Mapping[str, np.ndarray], *, number: int = 1, repeat: int = 3,
             min_repeat_ms: int = 0) -> list[float]: ...

    def source(self, kind: str = "tir") -> str: ...


class SplitKernel:
    """The parts of a split program, built; ``run``/``time``/``source`` as ``Kernel`` offers them."""

    def __init__(self, program: A.Program, params: tuple[Param, ...], kernels: list[PartKernel],
                 parts: list[Part]) -> None:
        self.program = program
        self.params = params
        self.kernels = kernels
        self.parts = parts
        self.target: dict[str, Any] = kernels[0].target
        self.versions: dict[str, str] = dict(kernels[0].versions)

    def _all(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        env = dict(arrays)
        for kernel, part in zip(self.kernels, self.parts, strict=True):
            env.update(kernel.run({n: env[n] for n in part.inputs}))
        return env

    def run(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        known = [p.name for p in self.params if p.role != "output"]
        missing = [n for n in known if n not in arrays]
        if missing:
            raise ValueError(f"missing input array {missing[0]!r} (expected {known})")
        env = self._all(arrays)
        from verifier.inputs import exchange_dtype

        return {p.name: env[p.name] if p.name in env else np.zeros(p.shape, dtype=exchange_dtype(p.dtype))
                for p in self.params if p.role == "output"}

    def time(self, arrays: Mapping[str, np.ndarray], *, number: int = 1, repeat: int = 3,
             min_repeat_ms: int = 0) -> list[float]:
        """Seconds per call for each repeat: the parts' times summed (each timed on its real inputs)."""
        env = self._all(arrays)
        total = np.zeros(repeat)
        for kernel, part in zip(self.kernels, self.parts, strict=True):
            share = max(1, min_repeat_ms // len(self.kernels))
            total += np.array(kernel.time({n: env[n] for n in part.inputs}, number=number, repeat=repeat,
                                          min_repeat_ms=share if min_repeat_ms else 0))
        return [float(t) for t in total]

    def source(self, kind: str = "tir") -> str:
        return "\n".join(k.source(kind) for k in self.kernels)


def build_split(program: A.Program, target: dict[str, Any], info: ProgramInfo, group_blocks: int,
                build_one: Callable[[A.Program], PartKernel],
                params: tuple[Param, ...]) -> SplitKernel:
    parts = split_program(program, info, group_blocks)
    kernels = [build_one(part.program) for part in parts]
    return SplitKernel(program, params, kernels, parts)
