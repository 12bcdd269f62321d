"""The operator registry: fx call targets (functions, method names, module types) → emitters.

Each operator family module registers its emitters with ``@op``; the translator looks a node up here and
nothing else, so supporting a new operator is one small function in one family module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from leir.dtypes import is_ml_dtype

from .emit import Emitter, Tensor

TORCH_TO_LEIR = {
    torch.float16: "f16", torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint8: "u8", torch.bool: "bool",
    torch.float8_e4m3fn: "f8e4m3", torch.float8_e5m2: "f8e5m2",
}


def leir_dtype(dtype: torch.dtype) -> str:
    from .errors import UnsupportedOperatorError

    try:
        return TORCH_TO_LEIR[dtype]
    except KeyError:
        supported = ", ".join(map(str, TORCH_TO_LEIR))
        raise UnsupportedOperatorError(f"dtype {dtype}", supported=supported) from None


#: Torch dtypes NumPy has no dtype for. LEIR stores their values as float32 arrays holding only values
#: of the type (``leir/dtypes.py``), which every one of them converts to exactly; so do ``OUT.npz`` files.
_WIDENED = (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A tensor's values as NumPy: a copy, bf16/fp8 widened exactly to float32 (LEIR's storage of them)."""
    t = t.detach().cpu().contiguous()
    if t.dtype in _WIDENED:
        t = t.to(torch.float32)
    return t.numpy().copy()


def from_numpy(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """A tensor of ``dtype`` holding ``array`` (float32, or an ``ml_dtypes`` array from the verifier)."""
    arr = np.asarray(array)
    if is_ml_dtype(arr.dtype):  # ml_dtypes' bfloat16/float8 arrays, which torch.from_numpy refuses
        arr = arr.astype(np.float32)
    return torch.from_numpy(np.array(arr, order="C", copy=True)).to(dtype)


@dataclass
class Ctx:
    """What an emitter gets besides its arguments: the emitter, the node and its concrete result."""

    em: Emitter
    node: Any
    real: Any
    module: Any = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.real.shape)

    @property
    def dtype(self) -> str:
        return leir_dtype(self.real.dtype)

    def known(self, value: torch.Tensor, role: str = "param") -> Tensor:
        """The LEIR tensor holding a parameter/buffer/constant (one per distinct tensor object)."""
        return self.em.add_known(id(value), to_numpy(value), leir_dtype(value.dtype), role, value)

    def maybe_known(self, value) -> Tensor | None:
        return None if value is None else self.known(value)


@dataclass(frozen=True)
class OpDef:
    name: str
    fn: Callable[..., Any]


FUNCTIONS: dict[Any, OpDef] = {}
METHODS: dict[str, OpDef] = {}
MODULES: dict[type, OpDef] = {}


def op(name: str, *functions: Any, methods: tuple[str, ...] = (), modules: tuple[type, ...] = ()):
    """Register an emitter under fx ``call_function`` targets, ``call_method`` names and module types.

    Function and method emitters are called as ``fn(ctx, *args, **kwargs)`` with the node's arguments
    (tensors already translated); module emitters as ``fn(ctx, module, *args, **kwargs)``.
    """

    def decorate(fn):
        entry = OpDef(name, fn)
        for f in functions:
            FUNCTIONS[f] = entry
        for m in methods:
            METHODS[m] = entry
        for t in modules:
            MODULES[t] = entry
        return fn

    return decorate


def lookup(node, module=None) -> OpDef | None:
    if node.op == "call_function":
        return FUNCTIONS.get(node.target) or _by_public_name(node.target)
    if node.op == "call_method":
        return METHODS.get(node.target)
    if node.op == "call_module":
        for cls in type(module).__mro__:
            if cls in MODULES:
                return MODULES[cls]
    return None


def _by_public_name(target: Any) -> OpDef | None:
    """The public function a C binding stands for: ``torch.export``'s tracer records the bindings
    themselves (``torch._C._nn.pad`` for ``F.pad``), and those are other objects than the Python wrappers."""
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None)
    if not name or not module.startswith("torch._C"):
        return None
    for namespace in (torch.nn.functional, torch, torch.special, torch.linalg):
        public = getattr(namespace, name, None)
        if public is not None and public in FUNCTIONS:
            return FUNCTIONS[public]
    return None


def supported_summary() -> str:
    names = sorted({d.name for d in (*FUNCTIONS.values(), *METHODS.values(), *MODULES.values())})
    return ", ".join(names)
