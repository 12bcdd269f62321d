"""LEIR element types as NumPy sees them.

The checker, the interpreter, the CLI and the verifier all need the same answers to "which NumPy dtype
stores this LEIR dtype", "what is its smallest/largest value" (integer reduction inits, ``inf`` in an
integer statement) and "is it a float". Keeping them here means there is one table to extend when the
lowering learns a new type.

How much storage a value takes is answered here too (``dtype_bytes``, ``numel``, ``tensor_nbytes``):
the strategies' on-chip budgets, the GPU limits and the tuner's cost model all count bytes, and a table
missing a type (the cost model's once lacked u16/u32/u64 and silently said 4) must fail, not guess.

``bf16``, ``f8e4m3`` and ``f8e5m2`` have no NumPy dtype: they are *stored* as ``float32`` holding only
values of the type, and ``round_bf16`` / ``round_fp8`` perform the rounding (round to nearest, ties to
even) that a store into such a buffer does. fp8 rounding is ``ml_dtypes``' (the library JAX uses), which
also gives the verifier the arrays it hands TVM, with PyTorch's rule beyond the range: ``f8e4m3``
(e4m3fn, no infinity) saturates to ±448 (±inf included), ``f8e5m2`` overflows to ±inf; NaN stays NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import numpy as np

from leir.ast import DTYPES, EMULATED_FLOAT_DTYPES, FLOAT_DTYPES, INT_DTYPES, UNSUPPORTED_DTYPES

__all__ = [
    "DTYPES",
    "UNSUPPORTED_DTYPES",
    "is_float",
    "is_int",
    "is_bool",
    "is_supported",
    "numpy_dtype",
    "storage_dtype",
    "min_value",
    "max_value",
    "round_bf16",
    "round_fp8",
    "is_emulated",
    "FP8_MAX",
    "exchange_dtype",
    "is_ml_dtype",
    "cast_to",
    "float_to_int",
    "int_limits",
    "from_numpy_dtype",
    "DTYPE_BYTES",
    "dtype_bytes",
    "numel",
    "tensor_nbytes",
]

_NUMPY: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "bf16": np.dtype(np.float32),  # emulated: float32 storage, rounded to bf16 on every store
    "f8e4m3": np.dtype(np.float32),  # emulated likewise, rounded to float8_e4m3fn
    "f8e5m2": np.dtype(np.float32),  # rounded to float8_e5m2
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}

_FROM_NUMPY: dict[np.dtype, str] = {v: k for k, v in _NUMPY.items() if k not in EMULATED_FLOAT_DTYPES}

#: Largest finite value of each fp8 type. ``f8e4m3`` has no infinity, so its reductions start from these
#: (``min_value``/``max_value``) instead of ∓inf, which it would store as NaN.
FP8_MAX: Mapping[str, float] = MappingProxyType({"f8e4m3": 448.0, "f8e5m2": 57344.0})

#: Bytes one element occupies as the hardware stores it, for every LEIR dtype (``bf16`` is 2 bytes even
#: though NumPy computes it in float32; the checker-refused ``UNSUPPORTED_DTYPES`` included).
DTYPE_BYTES: Mapping[str, int] = MappingProxyType({
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8,
    "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4, "u64": 8,
    "bool": 1,
    "f8e4m3": 1, "f8e5m2": 1, "c64": 8, "c128": 16,
})


def dtype_bytes(dtype: str) -> int:
    """Bytes one element of ``dtype`` occupies; ``ValueError`` for a code that is no LEIR dtype."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown LEIR dtype {dtype!r} (known: {', '.join(DTYPE_BYTES)})") from None


def numel(shape: Iterable[int]) -> int:
    """Elements of a tensor of ``shape`` (a scalar's empty shape has one)."""
    return math.prod(shape)


def tensor_nbytes(dtype: str, shape: Iterable[int]) -> int:
    """Bytes a tensor of ``dtype`` and ``shape`` occupies."""
    return dtype_bytes(dtype) * numel(shape)


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: str) -> bool:
    """Integer types (``bool`` is not one: it is its own kind)."""
    return dtype in INT_DTYPES


def is_emulated(dtype: str) -> bool:
    """Stored as float32 and rounded on every store (``bf16`` and the fp8 types)."""
    return dtype in EMULATED_FLOAT_DTYPES


def is_bool(dtype: str) -> bool:
    return dtype == "bool"


def is_supported(dtype: str) -> bool:
    """Accepted by the checker (known and lowerable)."""
    return dtype in _NUMPY


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype arithmetic runs in (``bf16`` → ``float32``). ``KeyError`` for unsupported codes."""
    try:
        return _NUMPY[dtype]
    except KeyError:
        raise KeyError(f"LEIR dtype {dtype!r} has no NumPy equivalent") from None


#: Arrays of a LEIR tensor are stored in the same dtype arithmetic runs in.
storage_dtype = numpy_dtype


def from_numpy_dtype(dtype: np.dtype | type) -> str:
    """The LEIR code of a NumPy dtype (``float32`` → ``f32``; never ``bf16``)."""
    key = np.dtype(dtype)
    try:
        return _FROM_NUMPY[key]
    except KeyError:
        raise KeyError(f"NumPy dtype {key} has no LEIR equivalent") from None


def min_value(dtype: str) -> int | float:
    """Smallest value: ``-inf`` for floats (``f8e4m3``: -448, no inf), the integer minimum, 0 for bool."""
    if dtype == "f8e4m3":
        return -FP8_MAX[dtype]
    if is_float(dtype):
        return float("-inf")
    if is_bool(dtype):
        return 0
    return int(np.iinfo(numpy_dtype(dtype)).min)


def max_value(dtype: str) -> int | float:
    """Largest value: ``inf`` for floats (``f8e4m3``: 448), the type maximum for integers, 1 for bool."""
    if dtype == "f8e4m3":
        return FP8_MAX[dtype]
    if is_float(dtype):
        return float("inf")
    if is_bool(dtype):
        return 1
    return int(np.iinfo(numpy_dtype(dtype)).max)


def round_bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32.

    Done on the bit pattern so that it needs no torch: add half an ulp of bf16 (plus the tie-breaking
    bit) to the raw 32 bits and clear the low 16. NaN is kept as a quiet NaN rather than rounding its
    payload into an infinity.
    """
    arr = np.ascontiguousarray(values, dtype=np.float32)
    bits = arr.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    nan = np.isnan(arr)
    if nan.any():
        out = out.copy()
        out[nan] = np.float32("nan")
    return out.reshape(arr.shape)


def _ml_dtype(dtype: str) -> np.dtype:
    import ml_dtypes

    codes = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "bf16": ml_dtypes.bfloat16}
    return np.dtype(codes[dtype])


def exchange_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a LEIR dtype's *hardware* storage: ``ml_dtypes``' for bf16/fp8, else its own."""
    return _ml_dtype(dtype) if is_emulated(dtype) else numpy_dtype(dtype)


def is_ml_dtype(dtype: np.dtype) -> bool:
    """An ``ml_dtypes`` type (bfloat16, float8...): its ``kind`` is not reliable (``V`` or ``f``)."""
    return np.dtype(dtype).type.__module__ == "ml_dtypes"


def round_fp8(values: np.ndarray, dtype: str) -> np.ndarray:
    """Round float values to the nearest ``dtype`` value (fp8, ties to even), returned as float32.

    ``f8e4m3`` saturates as PyTorch does (``ml_dtypes`` alone would give NaN): clipping to ±448 first
    changes nothing else, every value in (448, 464) rounding to 448 anyway.
    """
    arr = np.asarray(values)
    if dtype == "f8e4m3":
        arr = np.clip(arr, -FP8_MAX[dtype], FP8_MAX[dtype])  # NaN stays NaN
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.astype(_ml_dtype(dtype)).astype(np.float32)


def int_limits(target: np.dtype) -> tuple[int, int, float, float]:
    """(min, max, lowest float that stays in range, first float above the range) of an integer dtype.

    The two float thresholds are powers of two (or 0 / -2^(n-1)), exact in every float type, so a
    truncated value ``t`` is in range exactly when ``low <= t < high`` — no rounding of the type's
    maximum into the float type (2^63 - 1 becomes 2^63 in float64) can move the boundary.
    """
    info = np.iinfo(target)
    return int(info.min), int(info.max), float(info.min), float(int(info.max) + 1)


def float_to_int(values: np.ndarray, target: np.dtype) -> np.ndarray:
    """Float → integer, LEIR's conversion (docs/leir.md §6): truncate toward zero, then saturate.

    Values whose truncation lies outside the type (±inf included) become the type's min/max and NaN
    becomes 0 — NumPy and C leave all three undefined. Computed in float64, which holds every f16/bf16/
    f32 value exactly, against the exact thresholds of ``int_limits``.
    """
    lo, hi, low, high = int_limits(np.dtype(target))
    arr = np.asarray(values)
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.trunc(arr.astype(np.float64))
        inside = (t >= low) & (t < high)  # False for NaN
        out = np.where(inside, t, 0.0).astype(target)
    out = np.where(t >= high, np.array(hi, dtype=target), out)
    out = np.where(t < low, np.array(lo, dtype=target), out)
    return np.asarray(out, dtype=target).reshape(arr.shape)


def cast_to(values: np.ndarray, dtype: str) -> np.ndarray:
    """Convert to the storage of ``dtype`` the way a store does (bool: non-zero; bf16: rounded).

    Float → integer conversion truncates toward zero like a C cast; infinities become the type's
    extreme values instead of NumPy's undefined result.
    """
    target = numpy_dtype(dtype)
    arr = np.asarray(values)
    if is_bool(dtype):
        return arr != 0 if arr.dtype != np.bool_ else arr
    if is_int(dtype) and arr.dtype.kind == "f":
        return float_to_int(arr, target)
    if dtype in FP8_MAX:  # from the original values: rounding through float32 first could round twice
        return round_fp8(arr, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        out = arr.astype(target, copy=False)
    if dtype == "bf16":
        out = round_bf16(out)
    return out
