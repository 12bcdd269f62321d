"""TVMScript text converting fp8 bytes to float32 and back, exactly as ``ml_dtypes`` (and PyTorch) do.

TVM 0.27 has ``float8_e4m3fn``/``float8_e5m2`` buffers, but its llvm legalisation of their conversions is
wrong at the edges (measured on every one of the 256 byte values and 4096 floats: zero decodes to 2^-7,
subnormals are off, out-of-range values wrap to small numbers, e5m2's inf/NaN decode to finite values).
The lowering therefore stores fp8 tensors as ``uint8`` bytes and converts with integer arithmetic here:
the decoding is the format's definition, the encoding rounds to nearest, ties to even; beyond the range
e4m3fn saturates to ±448 (it has no infinity; ±inf too) and e5m2 gives ±inf, keeping the sign — the
rules of ``leir.dtypes.round_fp8``, which are PyTorch's. Arithmetic on the values happens in float32
(docs/leir.md §6).

``let(value, tvm_dtype, body)`` is ``emit_tir.Writer.let``: it binds a value used more than once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from leir.dtypes import cast_to, exchange_dtype

Let = Callable[..., str]


@dataclass(frozen=True)
class Format:
    """One fp8 format: mantissa bits, exponent bias, its largest finite byte and its out-of-range byte."""

    mantissa: int
    bias: int
    max_bits: int
    overflow_bits: int
    nan_bits: int
    has_inf: bool


FORMATS = {
    "f8e4m3": Format(mantissa=3, bias=7, max_bits=0x7E, overflow_bits=0x7E, nan_bits=0x7F, has_inf=False),
    "f8e5m2": Format(mantissa=2, bias=15, max_bits=0x7B, overflow_bits=0x7C, nan_bits=0x7E, has_inf=True),
}


def is_fp8(dtype: str) -> bool:
    return dtype in FORMATS


def literal(value: float, dtype: str) -> str:
    """The byte of ``value`` rounded to ``dtype``, as a ``T.uint8`` literal."""
    rounded = cast_to(np.array([value], dtype=np.float64), dtype).astype(exchange_dtype(dtype))
    byte = int(rounded.view(np.uint8)[0])
    return f"T.uint8({byte})"


def decode(byte: str, dtype: str, let: Let) -> str:
    """The float32 value of the fp8 ``byte`` (a ``uint8`` expression)."""
    fmt = FORMATS[dtype]
    if fmt.has_inf:  # e5m2 is the upper byte of a float16, infinities and NaN included
        return f"T.Cast(\"float32\", T.reinterpret(\"float16\", T.shift_left(T.Cast(\"uint16\", {byte}), " \
               "T.uint16(8))))"

    def build(b: str) -> str:
        exponent = f"T.bitwise_and(T.shift_right({b}, T.int32({fmt.mantissa})), T.int32(15))"
        mantissa = f"T.bitwise_and({b}, T.int32(7))"
        # a normal value's float32 bits: the exponent re-biased, the mantissa moved to the top
        biased = f"{exponent} + T.int32({127 - fmt.bias})"
        normal = (f"T.reinterpret(\"float32\", T.bitwise_or(T.shift_left({biased}, T.int32(23)), "
                  f"T.shift_left({mantissa}, T.int32({23 - fmt.mantissa}))))")
        subnormal = f"T.Cast(\"float32\", {mantissa}) * T.float32({2.0 ** (1 - fmt.bias - fmt.mantissa)!r})"
        magnitude = f"T.Select({exponent} == T.int32(0), {subnormal}, {normal})"
        magnitude = (f"T.Select(T.bitwise_and({b}, T.int32(127)) == T.int32(127), T.float32(\"nan\"), "
                     f"{magnitude})")
        negative = f"T.bitwise_and({b}, T.int32(128)) != T.int32(0)"
        return let(magnitude, "float32", lambda m: f"T.Select({negative}, -{m}, {m})")

    return let(f"T.Cast(\"int32\", {byte})", "int32", build)


def encode(value: str, dtype: str, let: Let) -> str:
    """The fp8 byte (``uint8``) nearest the float32 ``value``, ties to even (``round_fp8``'s rule)."""
    fmt = FORMATS[dtype]
    shift = 23 - fmt.mantissa
    min_normal = (127 + 1 - fmt.bias) << 23

    def with_bits(bits: str) -> str:
        def with_magnitude(a: str) -> str:
            sign = f"T.bitwise_and(T.shift_right({bits}, T.int64(24)), T.int64(128))"
            rounded = (f"T.shift_right({a} + T.int64({(1 << (shift - 1)) - 1}) + "
                       f"T.bitwise_and(T.shift_right({a}, T.int64({shift})), T.int64(1)), T.int64({shift}))")
            normal = f"({rounded} - T.int64({(127 - fmt.bias) << fmt.mantissa}))"
            # below the smallest normal the spacing is fixed: scale to units of it (exact) and round; the
            # magnitude is capped there first, so the unused branch never converts inf or NaN to int
            capped = f"T.Cast(\"int32\", T.min({a}, T.int64({min_normal})))"
            unit = 2.0 ** (fmt.bias - 1 + fmt.mantissa)
            scaled = f"T.reinterpret(\"float32\", {capped}) * T.float32({unit!r})"
            subnormal = f"T.Cast(\"int64\", T.nearbyint({scaled}))"
            return let(f"T.Select({a} < T.int64({min_normal}), {subnormal}, {normal})", "int64",
                       lambda q: _finish(q, a, sign, fmt))

        return let(f"T.bitwise_and({bits}, T.int64({0x7FFFFFFF}))", "int64", with_magnitude)

    return let(f"T.Cast(\"int64\", T.reinterpret(\"uint32\", {value}))", "int64", with_bits)


def _finish(q: str, a: str, sign: str, fmt: Format) -> str:
    """The byte: NaN in, NaN out; beyond the largest finite value, the format's overflow byte (the
    largest value for e4m3fn, which saturates; inf for e5m2)."""
    magnitude = (f"T.Select({a} > T.int64({0x7F800000}), T.int64({fmt.nan_bits}), "
                 f"T.Select({q} > T.int64({fmt.max_bits}), T.int64({fmt.overflow_bits}), {q}))")
    return f"T.Cast(\"uint8\", T.bitwise_or({sign}, {magnitude}))"
