"""CUDA launch limits and the bound-axis naming rule: one implementation for the strategies and the lowering.

A ``B`` loop binds a GPU axis chosen by its variable's name (``b<x|y|z>…`` → ``blockIdx``, ``t<x|y|z>…`` →
``threadIdx``, any other name → ``threadIdx.x``). Whether a binding fits the hardware — at most 1024
threads per block in total, 1024 on x/y and 64 on z, grid y/z at most 65535, 48 KB of static shared
memory per block — is decided here, so ``loop_binding`` never proposes a binding that the cuda lowering
(``verifier.lowering``, which raises ``GpuLimitError`` from the same violations) would refuse.
The limits are those every sm_5x+ part shares.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from leir.ast import Block, Loop, statements, tensor_refs
from leir.dtypes import tensor_nbytes
from leir.printer import loop_text

#: Threads one block may have in total, per thread axis, blocks per grid axis, static shared bytes.
MAX_THREADS_PER_BLOCK = 1024
MAX_THREADS = {"x": 1024, "y": 1024, "z": 64}
MAX_BLOCKS = {"x": 2**31 - 1, "y": 65535, "z": 65535}
MAX_SHARED_BYTES = 48 * 1024

#: The bound axes a variable can name, in the order strategies offer them.
BOUND_AXES = ("bx", "by", "bz", "tx", "ty", "tz")

_GPU_VAR = re.compile(r"^([bt])([xyz])")


class TensorFacts(Protocol):
    """What the shared-memory rule needs of a tensor (``leir.semantics.TensorInfo`` has it).

    Read-only properties, so a frozen dataclass such as ``TensorInfo`` matches the protocol.
    """

    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def scope(self) -> str: ...
    @property
    def role(self) -> str: ...


@dataclass(frozen=True, slots=True)
class GpuLimitViolation:
    """One broken limit: a readable message, the loop(s) or tensor(s) at fault, and the limit."""

    message: str
    loop: str
    limit: str


def thread_tag(var: str) -> str:
    """The CUDA axis a bound loop over ``var`` binds: ``blockIdx.x`` … ``threadIdx.z``."""
    m = _GPU_VAR.match(var)
    if not m:
        return "threadIdx.x"
    return ("blockIdx." if m.group(1) == "b" else "threadIdx.") + m.group(2)


def is_block_axis(var: str) -> bool:
    return thread_tag(var).startswith("blockIdx")


def axis_limit(tag: str) -> int:
    """How many iterations one binding of ``tag`` may have."""
    axis = tag[-1]
    return MAX_THREADS[axis] if tag.startswith("threadIdx") else MAX_BLOCKS[axis]


def all_loops(block: Block) -> Iterator[Loop]:
    """Every loop of a block's header and of its nested blocks, outermost first."""
    yield from block.loops
    for item in block.items:
        if isinstance(item, Block):
            yield from all_loops(item)


def gpu_limit_violations(block: Block, tensors: Mapping[str, TensorFacts]) -> list[GpuLimitViolation]:
    """Every CUDA limit a top-level block (one kernel launch) breaks, in a stable order."""
    out: list[GpuLimitViolation] = []
    extents: dict[str, tuple[int, Loop]] = {}
    for lp in all_loops(block):
        if lp.kind != "B":
            continue
        tag = thread_tag(lp.var)
        limit = axis_limit(tag)
        if lp.extent > limit:
            out.append(GpuLimitViolation(
                f"loop {loop_text(lp)} binds {tag} to {lp.extent}; the limit is {limit}",
                loop_text(lp), f"{tag} <= {limit}"))
        if tag not in extents or extents[tag][0] < lp.extent:
            extents[tag] = (lp.extent, lp)
    threads = 1
    for tag, (n, _) in sorted(extents.items()):
        if tag.startswith("threadIdx"):
            threads *= n
    if threads > MAX_THREADS_PER_BLOCK:
        names = ", ".join(loop_text(lp) for tag, (_, lp) in sorted(extents.items())
                          if tag.startswith("threadIdx"))
        out.append(GpuLimitViolation(
            f"loops {names} make {threads} threads per block; the limit is {MAX_THREADS_PER_BLOCK}",
            names, f"threads per block <= {MAX_THREADS_PER_BLOCK}"))
    shared = sorted({r.name for _, s, _ in statements(block) for ref in (s.target, s.value)
                     for r in tensor_refs(ref)
                     if r.name in tensors and tensors[r.name].scope == "s"
                     and tensors[r.name].role == "intermediate"})
    size = sum(tensor_nbytes(tensors[n].dtype, tensors[n].shape) for n in shared)
    if size > MAX_SHARED_BYTES:
        out.append(GpuLimitViolation(
            f"shared tensors {', '.join(shared)} need {size} bytes per block; the limit is "
            f"{MAX_SHARED_BYTES}",
            ", ".join(shared), f"shared memory <= {MAX_SHARED_BYTES} bytes"))
    return out


def threads_per_block(block: Block) -> int:
    """Threads one launch of the block uses (the product of its thread axes' largest extents)."""
    extents: dict[str, int] = {}
    for lp in all_loops(block):
        if lp.kind == "B" and not is_block_axis(lp.var):
            tag = thread_tag(lp.var)
            extents[tag] = max(extents.get(tag, 1), lp.extent)
    threads = 1
    for n in extents.values():
        threads *= n
    return threads
