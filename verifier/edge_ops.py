"""TVMScript text for LEIR's operations at edge values, where TIR's own operators mean something else.

docs/leir.md §6 defines every operation at NaN, ±inf, zero divisors and out-of-range conversions; the
interpreter gets those rules from NumPy. TIR does not: ``T.max`` on floats drops a NaN in one operand
order, ``T.floordiv`` by zero traps (SIGFPE) and by -1 of the minimum overflows, a float → int
``T.Cast`` of an out-of-range value is LLVM poison, ``!=`` on floats is *ordered* (false for NaN), and
float ``//`` / ``%`` have no TIR operator with NumPy's rounding. Each function here returns the TIR that
implements the rule, written with ``T.Select`` (eager, so every operand must be trap-free) and a
binding so an operand is evaluated once however often the rule mentions it.

Every function takes ``let(value, tvm_dtype, body)``: it binds ``value`` to a fresh variable (or uses
it as is when it is a leaf) and returns ``body(name)`` (``emit_tir.Writer.let``); ``opaque=True``
binds even a leaf, in a one-element buffer TVM's simplifier cannot see into.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from leir.dtypes import int_limits, numpy_dtype


class Let(Protocol):
    """``emit_tir.Writer.let``: ``body`` of a name bound to ``value`` (``opaque``: hidden from TVM)."""

    def __call__(self, value: str, tdt: str, body: Callable[[str], str], *, opaque: bool = False) -> str:
        ...


_FLOATS = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def lit(value: float | int, tdt: str) -> str:
    """A TVMScript literal of TVM dtype ``tdt`` (NaN and infinities spelled as strings; a uint64 beyond
    the int64 range — TVM's immediates stop at 2^63 - 1 — as the bitwise complement of a small one)."""
    if isinstance(value, float) and np.isnan(value):
        return f"T.{tdt}(\"nan\")"
    if isinstance(value, float) and np.isinf(value):
        return f"T.{tdt}(\"{'inf' if value > 0 else '-inf'}\")"
    if tdt == "uint64" and value >= 2**63:
        return f"T.bitwise_not(T.uint64({2**64 - 1 - int(value)}))"
    return f"T.{tdt}({value!r})"


#: Per float type: the integer type of its bits, the mask that drops the sign, and the bits of +inf.
#: Every value whose sign-less bits exceed +inf's is a NaN.
_NAN_BITS = {"float16": ("int16", 0x7FFF, 0x7C00), "float32": ("int32", 0x7FFFFFFF, 0x7F800000),
             "float64": ("int64", 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000)}


def isnan(x: str, tdt: str) -> str:
    """Whether ``x`` is a NaN, read off its bits (bfloat16 widened to float32 first, exactly).

    Not ``T.isnan``: TVM's loop vectoriser has no vector form of that call and scalarises the whole
    statement around it, so every NaN-propagating ``max`` (a ReLU, a clamp) under a ``V`` loop ran one
    lane at a time. Not ``x != x`` either: TVM folds that to false. The bit test is integer arithmetic,
    which vectorises, and it is the IEEE definition.
    """
    if tdt == "bfloat16":
        x, tdt = f"T.Cast(\"float32\", {x})", "float32"
    itype, mask, inf = _NAN_BITS[tdt]
    return f"(T.bitwise_and(T.reinterpret(\"{itype}\", {x}), {lit(mask, itype)}) > {lit(inf, itype)})"


def nan_max_min(func: str, a: str, b: str, tdt: str, let: Let) -> str:
    """``max``/``min`` of two floats that propagates NaN (PyTorch's maximum/minimum, NumPy's)."""
    op = ">" if func == "max" else "<"
    return let(a, tdt, lambda x: let(b, tdt, lambda y: (
        f"T.Select(T.Or({isnan(x, tdt)}, {x} {op} {y}), {x}, {y})")))


def int_div_mod(op: str, a: str, b: str, dtype: str, let: Let) -> str:
    """Integer floor division / floor modulo; a zero divisor gives 0, never a trap.

    The divisor is replaced by 1 where it is 0 (and, for signed types, where it is -1: the minimum
    divided by -1 traps on x86), and the quotient is fixed up by multiplication — no branch, so the
    simplifier cannot move the division back under a condition that TIR's eager ``Select`` would ignore.
    """
    tdt = numpy_dtype(dtype).name
    signed = dtype.startswith("i")

    def build(x: str, y: str) -> str:
        one = f"T.Cast(\"{tdt}\", {y} == {lit(0, tdt)})"
        if signed:
            minus_one = f"T.Cast(\"{tdt}\", {y} == {lit(-1, tdt)})"
            safe = f"({y} + {one} + {lit(2, tdt)} * {minus_one})"
        else:
            minus_one = ""
            safe = f"({y} + {one})"
        if op == "%":
            return f"T.floormod({x}, {safe})"  # x mod 1 is 0: right for both replaced divisors
        sign = f"(T.Cast(\"{tdt}\", {y} != {lit(0, tdt)})" + (f" - {lit(2, tdt)} * {minus_one})" if signed
                                                                 else ")")
        return f"(T.floordiv({x}, {safe}) * {sign})"

    return let(a, tdt, lambda x: let(b, tdt, lambda y: build(x, y)))


#: 32-bit integer types whose ``+ - *`` TVM emits with LLVM's ``nsw``/``nuw`` flags (overflow undefined):
#: computed in 64 bits, where they cannot overflow, and truncated — a wrap by definition. Narrower types
#: are emitted without flags and wrap as they are; 64-bit types have no wider type (docs/leir.md §6).
WIDENED = {"i32": ("int64", "int64", "int64"), "u32": ("int64", "int64", "uint64")}


def wrapping(op: str, a: str, b: str | None, dtype: str) -> str:
    """``+ - *`` (and negation, ``b=None``) of i32/u32 that wrap on overflow, as NumPy's do."""
    add, sub, mul = WIDENED[dtype]
    wide = {"+": add, "-": sub, "*": mul}[op]
    if b is None:
        return _narrow(f"{lit(0, wide)} - T.Cast(\"{wide}\", {a})", wide, dtype)
    return _narrow(f"T.Cast(\"{wide}\", {a}) {op} T.Cast(\"{wide}\", {b})", wide, dtype)


def _narrow(text: str, wide: str, dtype: str) -> str:
    """The low bits of a wide result as ``dtype``, brought into the type's range first (a mask, and for
    a signed type a shift by half the range around it): TVM folds a cast of a constant by building the
    immediate, which it refuses out of range (``2147483647+1`` in i32, ``0-1`` in u32); LLVM reduces
    the wrapper to the plain truncation."""
    tdt = numpy_dtype(dtype).name
    bits = numpy_dtype(dtype).itemsize * 8
    mask = lit(2**bits - 1, wide)
    if dtype.startswith("u"):
        return f"T.Cast(\"{tdt}\", T.bitwise_and({text}, {mask}))"
    half = lit(2 ** (bits - 1), wide)
    return f"T.Cast(\"{tdt}\", T.bitwise_and({text} + {half}, {mask}) - {half})"


def unsigned_sub(a: str | None, b: str, tdt: str) -> str:
    """``a - b`` (``-b`` for ``a=None``) in an unsigned type as ``a + ~b + 1``: the same bits, wrapping,
    but TVM's constant folding refuses an unsigned subtraction that goes below zero (``0-1``,
    ``A-A-1``) and builds the sum fine. The text is a ``+`` chain; the caller groups it."""
    tail = f"T.bitwise_not({b}) + {lit(1, tdt)}"
    return tail if a is None else f"{a} + {tail}"


def int_abs(a: str, dtype: str, let: Let) -> str:
    """``abs`` of an i32; the minimum stays the minimum (NumPy's wrap), never poison."""
    tdt = numpy_dtype(dtype).name
    wide = WIDENED[dtype][1]
    # opaque: TVM's simplifier turns ``x < 0`` of a constant minimum into a division by it, which it
    # cannot lower (``abs(A*0-2147483648)``)
    return let(a, tdt, opaque=True, body=lambda x: _narrow(
        f"T.Select({x} < {lit(0, tdt)}, {lit(0, wide)} - T.Cast(\"{wide}\", {x}), T.Cast(\"{wide}\", {x}))",
        wide, dtype))


def _work_type(dtype: str) -> str:
    """Float ``//`` and ``%`` of f16/bf16 run in float32 (as NumPy's half and PyTorch's opmath do)."""
    return "float32" if dtype in ("f16", "bf16") else _FLOATS[dtype]


def float_floordiv(a: str, b: str, dtype: str, let: Let) -> str:
    """``a // b`` on floats: NumPy's ``floor_divide`` (and PyTorch's), so ``1.0 // 0.1`` is 9.

    The quotient is ``(a - fmod(a, b)) / b``, moved down by one where the remainder's sign differs from
    the divisor's and snapped to the nearest integer; a zero divisor gives IEEE ``a / b``.
    """
    tdt, work = _FLOATS[dtype], _work_type(dtype)
    zero, one, half = lit(0.0, work), lit(1.0, work), lit(0.5, work)

    def snapped(x: str, y: str, m: str) -> str:
        d0 = f"(({x} - {m}) / {y})"
        return let(f"T.Select({_signs_differ(y, m, zero)}, {d0} - {one}, {d0})", work, lambda d: let(
            f"T.floor({d})", work, lambda f: (
                f"T.Select({d} == {zero}, T.copysign({zero}, {x} / {y}), "
                f"T.Select({d} - {f} > {half}, {f} + {one}, {f}))")))

    def body(x: str, y: str) -> str:
        inner = let(f"T.truncmod({x}, {y})", work, lambda m: snapped(x, y, m))
        return f"T.Select({y} == {zero}, {x} / {y}, {inner})"

    text = let(_widen(a, tdt, work), work, lambda x: let(_widen(b, tdt, work), work, lambda y: body(x, y)))
    return text if work == tdt else f"T.Cast(\"{tdt}\", {text})"


def float_mod(a: str, b: str, dtype: str, let: Let) -> str:
    """``a % b`` on floats: Python's / NumPy's ``remainder`` — the sign of the divisor; NaN for b = 0."""
    tdt, work = _FLOATS[dtype], _work_type(dtype)
    zero = lit(0.0, work)

    def body(y: str, m: str) -> str:
        return (f"T.Select({_signs_differ(y, m, zero)}, {m} + {y}, "
                f"T.Select({m} == {zero}, T.copysign({zero}, {y}), {m}))")

    text = let(_widen(a, tdt, work), work, lambda x: let(_widen(b, tdt, work), work, lambda y: let(
        f"T.truncmod({x}, {y})", work, lambda m: body(y, m))))
    return text if work == tdt else f"T.Cast(\"{tdt}\", {text})"


def _signs_differ(divisor: str, remainder: str, zero: str) -> str:
    """A non-zero remainder whose sign is not the divisor's (NumPy's ``mod && (b < 0) != (mod < 0)``)."""
    return (f"T.Or(T.And({divisor} < {zero}, {remainder} > {zero}), "
            f"T.And({divisor} > {zero}, {remainder} < {zero}))")


def _widen(text: str, tdt: str, work: str) -> str:
    return text if tdt == work else f"T.Cast(\"{work}\", {text})"


def float_to_int(text: str, src: str, dst: str, let: Let) -> str:
    """Float → integer: truncate, saturate out-of-range values and ±inf to the type's extremes, NaN → 0.

    Computed in float64 (every float type converts to it exactly) against the power-of-two thresholds
    of ``leir.dtypes.int_limits`` — the interpreter's ``float_to_int`` rule, written in TIR.
    """
    tdt = numpy_dtype(dst).name
    lo, hi, low, high = int_limits(numpy_dtype(dst))
    wide = text if src == "f64" else f"T.Cast(\"float64\", {text})"
    return let(f"T.trunc({wide})", "float64", lambda t: (
        f"T.Select({t} >= {lit(high, 'float64')}, {lit(hi, tdt)}, "
        f"T.Select({t} < {lit(low, 'float64')}, {lit(lo, tdt)}, "
        f"T.Select({isnan(t, 'float64')}, {lit(0, tdt)}, T.Cast(\"{tdt}\", {t}))))"))


def float_not_equal(a: str, b: str, tdt: str, let: Let) -> str:
    """IEEE ``!=`` (true when either side is NaN); TIR's ``!=`` on floats is the ordered comparison."""
    return let(a, tdt, lambda x: let(b, tdt, lambda y: (
        f"T.Or({x} != {y}, T.Or({isnan(x, tdt)}, {isnan(y, tdt)}))")))
