"""Build a lowered program for a target and run or time it on numpy arrays.

This is the API the sandbox/verify layer builds on: ``build(program_or_lowered, target) -> Kernel``;
``Kernel.run`` takes and returns plain numpy arrays keyed by tensor name, so callers never see TVM objects.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from leir.ast import Program
from leir.dtypes import is_ml_dtype
from leir.semantics import ProgramInfo
from verifier import targets as tg
from verifier import tvm_adapter as tvm_a
from verifier.errors import BuildError, LoweringError
from verifier.fp8_ops import is_fp8
from verifier.inputs import exchange_dtype
from verifier.lowering import Lowered, Param, lower

if TYPE_CHECKING:
    from verifier.split_build import SplitKernel

__all__ = ["Kernel", "build", "cuda_source", "BuildError", "LoweringError"]


@dataclass
class Kernel:
    """A compiled program: run/time it on numpy arrays, read its TIR and generated sources."""

    lowered: Lowered
    executable: Any
    target: dict[str, Any]
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def params(self) -> tuple[Param, ...]:
        return self.lowered.params

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.role == "output")

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.role != "output")

    def _args(self, arrays: Mapping[str, np.ndarray]) -> list[Any]:
        if not tg.runs_here(self.target):
            raise LoweringError(f"a {self.target['kind']} kernel cannot run on this machine")
        args = []
        for p in self.params:
            dtype = exchange_dtype(p.dtype)
            if p.role == "output":
                array = np.zeros(p.shape, dtype=dtype)
            else:
                if p.name not in arrays:
                    raise ValueError(f"missing input array {p.name!r} (expected {list(self.input_names)})")
                array = np.asarray(arrays[p.name])
                if tuple(array.shape) != p.shape:
                    raise ValueError(f"input {p.name!r} has shape {tuple(array.shape)}, expected {p.shape}")
                array = array.astype(dtype, copy=False)
            if is_fp8(p.dtype):  # the kernel holds fp8 tensors as their bytes (verifier.fp8_ops)
                array = array.view(np.uint8)
            args.append(tvm_a.cpu_tensor(array))
        return args

    def run(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run once: copy the inputs in, return every output (fresh zero-initialised buffers)."""
        args = self._args(arrays)
        try:
            tvm_a.call(self.executable, args)
        except tvm_a.AdapterError as exc:
            raise BuildError(str(exc)) from exc
        return {p.name: _from_kernel(tvm_a.to_numpy(a), p.dtype)
                for p, a in zip(self.params, args, strict=True) if p.role == "output"}

    def time(self, arrays: Mapping[str, np.ndarray], *, number: int = 1, repeat: int = 3,
             min_repeat_ms: int = 0) -> list[float]:
        """Seconds per call for each of ``repeat`` repeats (TVM's time evaluator)."""
        args = self._args(arrays)
        return tvm_a.time_main(self.executable, args, number=number, repeat=repeat,
                               min_repeat_ms=min_repeat_ms)

    def source(self, kind: str = "tir") -> str:
        """``tir`` (printed TVMScript), ``llvm`` (host LLVM IR), ``asm`` (host assembly) or ``cuda``
        (device C source)."""
        if kind == "tir":
            return self.lowered.script
        if kind == "asm":
            if not (text := tvm_a.assembly(self.executable)):
                raise KeyError("no assembly in this build")
            return text
        found = tvm_a.sources(self.executable)
        if kind not in found:
            raise KeyError(f"no {kind!r} source in this build (have: {', '.join(sorted(found))})")
        return found[kind]


#: Kernels of recently built programs: (program, target key) → Kernel. A tuner or a verification of a
#: step rebuilds the same states again and again; a Kernel is safe to share because ``run``/``time``
#: allocate fresh buffers on every call. Program equality ignores source positions.
_KERNELS: OrderedDict[tuple[Program, str, int | None], Kernel | SplitKernel] = OrderedDict()
KERNEL_CACHE_SIZE = 32


def _from_kernel(array: np.ndarray, dtype: str) -> np.ndarray:
    """An output as the interpreter holds it: bf16 and fp8 (bytes here) as float32 holding their values."""
    if is_fp8(dtype):
        array = array.view(exchange_dtype(dtype))
    if is_ml_dtype(array.dtype):
        return array.astype(np.float32)
    return array


def build(program_or_lowered: Program | Lowered, target: str | dict[str, Any] = "llvm", *,
          info: ProgramInfo | None = None, cache: bool = True,
          split: int | None = None) -> Kernel | SplitKernel:
    """Lower (if needed) and compile. Raises ``LeirCheckError``, ``LoweringError`` (and its
    ``GpuLimitError``/``BuildError`` subclasses). Programs (not ``Lowered``) hit a small in-process
    kernel cache unless ``cache=False``.

    ``split``: build a program in parts of about this many top-level blocks (``verifier.split_build``);
    by default an llvm program longer than twice ``DEFAULT_GROUP_BLOCKS`` is split, ``0`` never splits;
    a split program builds as a ``SplitKernel``, which runs, times and prints as a ``Kernel`` does.
    """
    spec = tg.resolve(target)
    if cache and isinstance(program_or_lowered, Program):
        key = (program_or_lowered, tg.key(spec), split)
        if key in _KERNELS:
            _KERNELS.move_to_end(key)
            return _KERNELS[key]
        kernel = build(program_or_lowered, spec, info=info, cache=False, split=split)
        _KERNELS[key] = kernel
        while len(_KERNELS) > KERNEL_CACHE_SIZE:
            _KERNELS.popitem(last=False)
        return kernel
    if isinstance(program_or_lowered, Program) and _split_size(program_or_lowered, spec, split):
        return _build_in_parts(program_or_lowered, spec, info, _split_size(program_or_lowered, spec, split))
    if isinstance(program_or_lowered, Lowered):
        lowered = program_or_lowered
        if spec["kind"] != lowered.target["kind"]:  # the TIR depends on the target kind only
            lowered = lower(lowered.program, spec, info=lowered.info)
    else:
        lowered = lower(program_or_lowered, spec, info=info)
    try:
        executable = tvm_a.compile_module(lowered.mod, spec)
    except tvm_a.AdapterError as exc:
        raise BuildError(str(exc)) from exc
    return Kernel(lowered=lowered, executable=executable, target=spec, versions=dict(lowered.versions))


def _split_size(program: Program, spec: dict[str, Any], split: int | None) -> int:
    """Blocks per part, or 0 to build the program as one function."""
    from verifier.split_build import DEFAULT_GROUP_BLOCKS

    if split is None:
        long = len(program.body.blocks) > 2 * DEFAULT_GROUP_BLOCKS
        return DEFAULT_GROUP_BLOCKS if spec["kind"] == "llvm" and long else 0
    return split if 0 < split < len(program.body.blocks) else 0


def _build_in_parts(program: Program, spec: dict[str, Any], info: ProgramInfo | None,
                    size: int) -> SplitKernel:
    from leir.checker import check
    from leir.errors import LeirCheckError
    from verifier.split_build import build_split

    info = info or check(program)
    if not info.ok:
        raise LeirCheckError(info.errors)
    params = tuple(Param(d.name, d.role, d.dtype, tuple(d.shape)) for d in program.signature.tensors)
    return build_split(program, spec, info, size,
                       lambda part: build(part, spec, cache=False, split=0), params)


def cuda_source(program: Program | Lowered, *, info: ProgramInfo | None = None,
                target: str | dict[str, Any] = "cuda") -> str:
    """Build for cuda and return the CUDA C source TVM generated (compiles here, runs on a GPU)."""
    return build(program, target, info=info).source("cuda")
