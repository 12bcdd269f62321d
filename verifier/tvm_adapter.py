"""The one module of steptp that imports ``tvm``.

TVM renames things between releases (``tvm.tir`` became ``tvm.tirx``, ``tvm.build`` became ``tvm.compile``,
``NDArray`` became ``Tensor``, schedules moved to ``tvm.s_tir``). Keeping every TVM call behind this small
surface means a TVM upgrade touches one file, and every result can say which TVM and tvm-ffi built it.
The rest of ``verifier`` passes around opaque handles (``Module``, ``Executable``) and numpy arrays.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm
import tvm_ffi

Module = Any  # tvm.IRModule
Executable = Any  # tvm.runtime.Executable

#: TVMScript dtype names of the LEIR dtypes. fp8 tensors are their bytes: TVM 0.27's own float8 conversions
#: are wrong on llvm, so ``verifier.fp8_ops`` converts them (and no arithmetic is ever done in fp8).
TVM_DTYPES: dict[str, str] = {
    "f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16",
    "f8e4m3": "uint8", "f8e5m2": "uint8",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "bool": "bool",
}


class AdapterError(Exception):
    """TVM refused a module (parse, build or run); the message carries TVM's own diagnostic."""


@functools.cache
def versions() -> dict[str, str]:
    """TVM and tvm-ffi versions, recorded on every lowering, build and verification."""
    return {"tvm": str(tvm.__version__), "tvm_ffi": str(getattr(tvm_ffi, "__version__", "unknown"))}


def parse_script(text: str) -> Module:
    """Parse the TVMScript text of one ``@T.prim_func`` named ``main`` into an IRModule."""
    try:
        func = tvm.script.from_source(text)
    except Exception as exc:
        raise AdapterError(f"TVMScript parse failed: {_first_lines(exc)}") from exc
    return tvm.IRModule({"main": func})


def script(mod: Module) -> str:
    """TVM's own printed TVMScript of a module (deterministic for a given module)."""
    return str(mod.script())


def make_target(spec: dict[str, Any]) -> Any:
    return tvm.target.Target(dict(spec))


def system_cpu() -> str:
    """The CPU LLVM's host detection names (``znver5``, ``skylake-avx512``; ``generic`` when unknown)."""
    return str(tvm.target.codegen.llvm_get_system_cpu())


def target_has_feature(spec: dict[str, Any], feature: str) -> bool:
    """Whether LLVM builds code for target ``spec`` with ``feature`` (``avx512f``): the CPU's features as
    the target's ``mattr`` leaves them, including those switched off with another one."""
    return bool(tvm.target.codegen.target_has_features(feature, make_target(spec)))


def compile_module(mod: Module, target: dict[str, Any]) -> Executable:
    """``tvm.compile`` for a target dict; failures become ``AdapterError`` with TVM's message."""
    try:
        return tvm.compile(mod, target=make_target(target))
    except Exception as exc:
        raise AdapterError(f"TVM build failed: {_first_lines(exc)}") from exc


def peak_ir_size(mod: Module, target: dict[str, Any]) -> int:
    """The largest printed size (characters of ``mod.script()``) of the module between TVM's build passes.

    A load-independent measure of how much work a build does: a lowering that lets TVM's simplifier
    duplicate subexpressions shows it as growth here long before the build time becomes absurd (the
    depth tests and ``bench/build_depth.py`` read it).
    """
    from tvm.ir.instrument import pass_instrument

    sizes = [len(script(mod))]

    @pass_instrument
    class _Sizes:
        def run_after_pass(self, module: Any, info: Any) -> None:
            sizes.append(len(str(module.script())))

    try:
        with tvm.transform.PassContext(instruments=[_Sizes()]):
            tvm.compile(mod, target=make_target(target))
    except Exception as exc:
        raise AdapterError(f"TVM build failed: {_first_lines(exc)}") from exc
    return max(sizes)


def cpu_tensor(array: np.ndarray) -> Any:
    # np.ascontiguousarray would turn a 0-d array into shape (1,); a C-order copy keeps scalars 0-d
    return tvm.runtime.tensor(np.array(array, order="C", copy=True), tvm.cpu(0))


def to_numpy(tensor: Any) -> np.ndarray:
    array: np.ndarray = tensor.numpy()  # TVM has no type hints
    return array


def call(ex: Executable, args: Sequence[Any]) -> None:
    """Run ``main`` once on already-allocated runtime tensors."""
    try:
        ex["main"](*args)
    except Exception as exc:
        raise AdapterError(f"TVM run failed: {_first_lines(exc)}") from exc


def time_main(ex: Executable, args: Sequence[Any], *, number: int, repeat: int,
              min_repeat_ms: int) -> list[float]:
    """Seconds per call of ``main`` for each repeat, from TVM's own time evaluator on the CPU."""
    evaluator = ex.mod.time_evaluator("main", tvm.cpu(0), number=number, repeat=repeat,
                                      min_repeat_ms=min_repeat_ms)
    return [float(x) for x in evaluator(*args).results]


def sources(ex: Executable) -> dict[str, str]:
    """Generated sources by kind: ``llvm`` (host IR) and ``cuda`` (device C) where present."""
    found: dict[str, str] = {}
    _collect_sources(ex.mod, found)
    return found


def assembly(ex: Executable) -> str:
    """The host module's machine code as assembly text (which instructions and registers LLVM chose);
    empty when no module carries any. Separate from ``sources``: generating it costs a codegen pass."""
    for mod in (ex.mod, *getattr(ex.mod, "imports", ())):
        try:
            text = str(mod.inspect_source("asm"))
        except Exception:
            continue
        if text:
            return text
    return ""


def _collect_sources(mod: Any, found: dict[str, str]) -> None:
    kind = str(getattr(mod, "kind", ""))
    try:
        text = str(mod.inspect_source())
    except Exception:
        text = ""
    if text and kind not in found:
        found[kind] = text
    for sub in getattr(mod, "imports", ()):
        _collect_sources(sub, found)


def cuda_kernel_text(source: str) -> str:
    """The CUDA source without TVM's fixed preamble (the same ~100 lines of macros in every module).

    Token counts compare what a program says, so the boilerplate that is identical for every
    kernel is cut: everything before the first ``extern "C"`` declaration.
    """
    match = re.search(r'^extern "C"', source, flags=re.MULTILINE)
    return source[match.start():] if match else source


def _first_lines(exc: BaseException, limit: int = 12) -> str:
    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
    return "\n".join(lines[-limit:]) if lines else type(exc).__name__
