"""Broadcasting arithmetic, comparisons, selection, casts and the value-preserving no-ops.

All of these are one block over the output shape (operands broadcast by ``Emitter.bref``); the
statement is evaluated in the output's dtype, which LEIR's semantics make match PyTorch's promotion.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F
from torch import nn

from leir.ast import BinOp
from leir.dtypes import dtype_bytes

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import leir_dtype, op


def ew(ctx, operands, fn) -> Tensor:
    """One elementwise block producing the node's (concrete) shape and dtype."""
    return ctx.em.elementwise(ctx.shape, ctx.dtype, operands, fn)


def _scaled(b, alpha):
    return b if alpha == 1 else E.mul(b, alpha)


@op("add", operator.add, operator.iadd, torch.add, methods=("add", "add_", "__add__", "__radd__", "__iadd__"))
def add(ctx, a, b, *, alpha=1, out=None):
    return ew(ctx, [a, b], lambda x, y: E.add(x, _scaled(y, alpha)))


@op("sub", operator.sub, operator.isub, torch.sub, torch.subtract,
    methods=("sub", "sub_", "subtract", "__sub__", "__isub__"))
def sub(ctx, a, b, *, alpha=1, out=None):
    return ew(ctx, [a, b], lambda x, y: E.sub(x, _scaled(y, alpha)))


@op("rsub", torch.rsub, methods=("__rsub__",))
def rsub(ctx, a, b, *, alpha=1):
    return ew(ctx, [a, b], lambda x, y: E.sub(y, _scaled(x, alpha)))


@op("mul", operator.mul, operator.imul, torch.mul, torch.multiply,
    methods=("mul", "mul_", "multiply", "__mul__", "__rmul__", "__imul__"))
def mul(ctx, a, b, *, out=None):
    return ew(ctx, [a, b], E.mul)


@op("truediv", operator.truediv, operator.itruediv, torch.div, torch.divide, torch.true_divide,
    methods=("div", "div_", "divide", "true_divide", "__truediv__", "__itruediv__"))
def truediv(ctx, a, b, *, rounding_mode=None, out=None):
    if rounding_mode is not None and ctx.dtype in ("f16", "f32", "f64", "bf16"):
        raise UnsupportedOperatorError("div", detail=f"rounding_mode={rounding_mode!r} on floats")
    if rounding_mode == "trunc" and ctx.dtype != "bool":
        # LEIR's integer '/' floors; truncation differs for negative quotients
        raise UnsupportedOperatorError("div", detail="rounding_mode='trunc' on integers",
                                       supported="rounding_mode='floor' or true division")
    return ew(ctx, [a, b], E.div)


@op("rtruediv", methods=("__rtruediv__",))
def rtruediv(ctx, a, b):
    return ew(ctx, [a, b], lambda x, y: E.div(y, x))


@op("floordiv", operator.floordiv, torch.floor_divide, methods=("floor_divide", "__floordiv__"))
def floordiv(ctx, a, b):
    if ctx.dtype.startswith("f") or ctx.dtype == "bf16":
        raise UnsupportedOperatorError("floor_divide", detail="on floating point (LEIR has no floor)")
    return ew(ctx, [a, b], E.div)  # integer '/' is floor division in LEIR


@op("remainder", operator.mod, torch.remainder, methods=("remainder", "__mod__"))
def remainder(ctx, a, b):
    if ctx.dtype.startswith("f") or ctx.dtype == "bf16":
        raise UnsupportedOperatorError("remainder", detail="on floating point")
    return ew(ctx, [a, b], lambda x, y: BinOp("%", x, y))  # floor modulo, as PyTorch's remainder


@op("neg", operator.neg, torch.neg, torch.negative, methods=("neg", "negative", "__neg__"))
def neg(ctx, a):
    return ew(ctx, [a], E.neg)


@op("pos", operator.pos, methods=("__pos__",))
def pos(ctx, a):
    return a


@op("pow", operator.pow, torch.pow, methods=("pow", "pow_", "__pow__"))
def pow_(ctx, a, b):
    if isinstance(b, int | float) and not isinstance(b, bool):
        if b in (2, 3, 4):  # exact and sign-safe for negative bases, unlike a float pow
            def power(x):
                out = x
                for _ in range(int(b) - 1):
                    out = E.mul(out, x)
                return out

            return ew(ctx, [a], power)
        if b == 1:
            return ew(ctx, [a], lambda x: x)
        if b == 0.5:
            return ew(ctx, [a], E.sqrt)
        if b == -1:
            return ew(ctx, [a], lambda x: E.div(1, x))
    return ew(ctx, [a, b], E.pow_)


@op("hypot", torch.hypot, methods=("hypot",))
def hypot(ctx, a, b):
    return ew(ctx, [a, b], lambda x, y: E.sqrt(E.add(E.mul(x, x), E.mul(y, y))))


@op("rpow", methods=("__rpow__",))
def rpow(ctx, a, b):
    return ew(ctx, [a, b], lambda x, y: E.pow_(y, x))


@op("square", torch.square, methods=("square",))
def square(ctx, a):
    return ew(ctx, [a], lambda x: E.mul(x, x))


def _unary(name, fn, *functions, methods=()):
    op(name, *functions, methods=methods)(lambda ctx, a, *, out=None: ew(ctx, [a], fn))


_unary("exp", E.exp, torch.exp, methods=("exp", "exp_"))
_unary("log", E.log, torch.log, methods=("log", "log_"))
_unary("sqrt", E.sqrt, torch.sqrt, methods=("sqrt", "sqrt_"))
_unary("rsqrt", lambda x: E.div(1, E.sqrt(x)), torch.rsqrt, methods=("rsqrt",))
_unary("abs", lambda x: E.call("abs", x), torch.abs, torch.absolute, operator.abs,
       methods=("abs", "abs_", "__abs__"))
_unary("erf", lambda x: E.call("erf", x), torch.erf, torch.special.erf, methods=("erf",))
# erfc as 1-erf: LEIR has no erfc; the cancellation for large x is far below the comparison's atol
_unary("erfc", lambda x: E.sub(1, E.call("erf", x)), torch.erfc, torch.special.erfc, methods=("erfc",))
_unary("reciprocal", lambda x: E.div(1, x), torch.reciprocal, methods=("reciprocal",))
_unary("expm1", lambda x: E.sub(E.exp(x), 1), torch.expm1, methods=("expm1",))
_unary("log1p", lambda x: E.log(E.add(1, x)), torch.log1p, methods=("log1p",))
_unary("log2", lambda x: E.div(E.log(x), E.lit(0.6931471805599453)), torch.log2, methods=("log2",))
_unary("log10", lambda x: E.div(E.log(x), E.lit(2.302585092994046)), torch.log10, methods=("log10",))
_unary("exp2", lambda x: E.exp(E.mul(x, E.lit(0.6931471805599453))), torch.exp2, methods=("exp2",))
# sin/cos: LEIR's documented superset of the public call set (docs/leir.md §6), for rotary embeddings
_unary("sin", lambda x: E.call("sin", x), torch.sin, methods=("sin", "sin_"))
_unary("cos", lambda x: E.call("cos", x), torch.cos, methods=("cos", "cos_"))
_unary("tan", lambda x: E.div(E.call("sin", x), E.call("cos", x)), torch.tan, methods=("tan", "tan_"))
_unary("sinh", lambda x: E.div(E.sub(E.exp(x), E.exp(E.neg(x))), 2), torch.sinh, methods=("sinh",))
_unary("cosh", lambda x: E.div(E.add(E.exp(x), E.exp(E.neg(x))), 2), torch.cosh, methods=("cosh",))
_unary("asinh", lambda x: E.log(E.add(x, E.sqrt(E.add(E.mul(x, x), 1)))), torch.asinh, methods=("asinh",))
_unary("acosh", lambda x: E.log(E.add(x, E.sqrt(E.sub(E.mul(x, x), 1)))), torch.acosh, methods=("acosh",))
_unary("atanh", lambda x: E.mul(0.5, E.log(E.div(E.add(1, x), E.sub(1, x)))), torch.atanh, methods=("atanh",))
_unary("logit", lambda x: E.log(E.div(x, E.sub(1, x))), torch.logit, methods=("logit",))
_unary("sign", lambda x: E.ite(E.cmp(x, ">", 0), 1, E.ite(E.cmp(x, "<", 0), -1, 0)), torch.sign,
       methods=("sign",))


# ------------------------------------------------------------------------------------------- compare

def _comparison(name, symbol, *functions, methods=()):
    def emit(ctx, a, b):
        return ew(ctx, [a, b], lambda x, y: E.ite(E.cmp(x, symbol, y), 1, 0))

    op(name, *functions, methods=methods)(emit)


_comparison("gt", ">", operator.gt, torch.gt, torch.greater, methods=("gt", "__gt__", "greater"))
_comparison("ge", ">=", operator.ge, torch.ge, torch.greater_equal, methods=("ge", "__ge__"))
_comparison("lt", "<", operator.lt, torch.lt, torch.less, methods=("lt", "__lt__", "less"))
_comparison("le", "<=", operator.le, torch.le, torch.less_equal, methods=("le", "__le__"))
_comparison("eq", "==", operator.eq, torch.eq, methods=("eq", "__eq__"))
_comparison("ne", "!=", operator.ne, torch.ne, torch.not_equal, methods=("ne", "__ne__"))


def _as_cond(t: Tensor, ref):
    """A tensor as a condition: bool tensors directly, others compared with zero."""
    return ref if t.dtype == "bool" else E.cmp(ref, "!=", 0)


def _bool_operands(name, a, b):
    for t in (a, b):
        if isinstance(t, Tensor) and t.dtype != "bool":
            raise UnsupportedOperatorError(name, detail="bitwise operation on non-bool tensors")


@op("and", operator.and_, torch.logical_and, torch.bitwise_and, methods=("logical_and", "__and__"))
def and_(ctx, a, b):
    mask = _low_bits_mask(a, b)
    if mask is not None:  # x & (2^n - 1) keeps the low n bits: floor modulo 2^n (negative x too)
        x = a if isinstance(a, Tensor) else b
        return ew(ctx, [x], lambda v: BinOp("%", v, E.lit(mask + 1)))
    _bool_operands("and", a, b)
    return ew(ctx, [a, b], lambda x, y: E.ite(E.land(x, y), 1, 0))


def _low_bits_mask(a, b) -> int | None:
    """The ``2^n - 1`` of an integer tensor ANDed with that literal (unpacking int4 nibbles), else None."""
    if isinstance(a, Tensor) and isinstance(b, int) and not isinstance(b, bool):
        tensor, mask = a, b
    elif isinstance(b, Tensor) and isinstance(a, int) and not isinstance(a, bool):
        tensor, mask = b, a
    else:
        return None
    if tensor.dtype == "bool" or tensor.dtype.startswith("f") or mask <= 0 or mask & (mask + 1):
        return None
    return mask


def _shift_amount(name: str, a, b) -> int:
    if not isinstance(a, Tensor) or a.dtype == "bool" or a.dtype.startswith("f"):
        raise UnsupportedOperatorError(name, detail="of a non-integer tensor")
    # 2^k must be a literal of the type: below its top bit
    if not isinstance(b, int) or isinstance(b, bool) or not 0 <= b < 8 * dtype_bytes(a.dtype) - 1:
        raise UnsupportedOperatorError(name, detail="by a tensor or an out-of-range amount",
                                       supported="a literal shift 0 <= k < the type's bits - 1")
    return b


@op("rshift", operator.rshift, torch.bitwise_right_shift, methods=("__rshift__", "bitwise_right_shift"))
def rshift(ctx, a, b):
    """``x >> k``: floor division by 2^k, which is the arithmetic shift of signed values too."""
    k = _shift_amount("rshift", a, b)
    return ew(ctx, [a], lambda v: E.div(v, E.lit(2**k)))  # integer '/' floors in LEIR


@op("lshift", operator.lshift, torch.bitwise_left_shift, methods=("__lshift__", "bitwise_left_shift"))
def lshift(ctx, a, b):
    """``x << k``: multiplication by 2^k, wrapping like the shift (LEIR integer overflow wraps)."""
    k = _shift_amount("lshift", a, b)
    return ew(ctx, [a], lambda v: E.mul(v, E.lit(2**k)))


@op("or", operator.or_, torch.logical_or, torch.bitwise_or, methods=("logical_or", "__or__"))
def or_(ctx, a, b):
    _bool_operands("or", a, b)
    return ew(ctx, [a, b], lambda x, y: E.ite(E.lor(x, y), 1, 0))


@op("not", operator.invert, torch.logical_not, torch.bitwise_not, methods=("logical_not", "__invert__"))
def not_(ctx, a):
    return ew(ctx, [a], lambda x: E.ite(_as_cond(a, x), 0, 1))


@op("where", torch.where, methods=("where",))
def where(ctx, cond, a=None, b=None):
    if a is None:
        raise UnsupportedOperatorError("where", detail="the one-argument form (dynamic shape)")
    return ew(ctx, [cond, a, b], lambda c, x, y: E.ite(_as_cond(cond, c), x, y))


@op("masked_fill", torch.masked_fill, methods=("masked_fill", "masked_fill_"))
def masked_fill(ctx, x, mask, value):
    return ew(ctx, [mask, x, value], lambda m, a, v: E.ite(_as_cond(mask, m), v, a))


@op("clamp", torch.clamp, torch.clip, methods=("clamp", "clamp_", "clip", "clip_"))
def clamp(ctx, x, min=None, max=None):
    def fn(a, lo, hi):
        out = a
        if min is not None:
            out = E.maximum(out, lo)
        if max is not None:
            out = E.minimum(out, hi)
        return out

    return ew(ctx, [x, 0 if min is None else min, 0 if max is None else max], fn)


@op("clamp_min", torch.clamp_min, methods=("clamp_min",))
def clamp_min(ctx, x, min):
    return ew(ctx, [x, min], E.maximum)


@op("clamp_max", torch.clamp_max, methods=("clamp_max",))
def clamp_max(ctx, x, max):
    return ew(ctx, [x, max], E.minimum)


@op("maximum", torch.maximum, torch.fmax, methods=("maximum",))
def maximum(ctx, a, b):
    return ew(ctx, [a, b], E.maximum)


@op("minimum", torch.minimum, torch.fmin, methods=("minimum",))
def minimum(ctx, a, b):
    return ew(ctx, [a, b], E.minimum)


@op("lerp", torch.lerp, methods=("lerp",))
def lerp(ctx, a, b, w):
    return ew(ctx, [a, b, w], lambda x, y, t: E.add(x, E.mul(t, E.sub(y, x))))


@op("addcmul", torch.addcmul, methods=("addcmul",))
def addcmul(ctx, x, a, b, *, value=1):
    return ew(ctx, [x, a, b],
              lambda s, p, q: E.add(s, E.mul(value, E.mul(p, q)) if value != 1 else E.mul(p, q)))


# ------------------------------------------------------------------------------------- casts, no-ops

def cast(ctx, x):
    """Same values in the node's dtype: no block at all when the dtype does not change."""
    if not isinstance(x, Tensor):
        raise UnsupportedOperatorError("cast", detail="of a non-tensor")
    if x.dtype == ctx.dtype:
        return x
    if ctx.dtype == "bool":
        return ew(ctx, [x], lambda a: E.ite(E.cmp(a, "!=", 0), 1, 0))
    return ew(ctx, [x], lambda a: a)


@op("to", methods=("to", "type", "float", "double", "half", "long", "int", "bool", "type_as", "short",
                   "bfloat16", "byte"))
def to(ctx, x, *args, **kwargs):
    return cast(ctx, x)


@op("copy_", methods=("copy_",))
def copy_(ctx, dst, src, non_blocking=False):
    """``dst.copy_(src)``: ``src`` broadcast to ``dst``'s shape and cast to its dtype; later reads of
    ``dst`` (the node itself, or the module attribute it names) see the copy."""
    if not isinstance(src, Tensor):
        raise UnsupportedOperatorError("copy_", detail="from a non-tensor")
    return ew(ctx, [src], lambda a: a)


@op("identity", torch.clone, methods=("contiguous", "clone", "detach", "requires_grad_", "cpu", "cuda"),
    modules=(nn.Identity,))
def identity(ctx, *args, **kwargs):
    x = args[1] if ctx.module is not None else args[0]
    return x


@op("dropout", F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, torch.dropout,
    methods=("dropout",), modules=(nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout))
def dropout(ctx, *args, **kwargs):
    if ctx.module is not None:
        module, x = args[0], args[1]
        p, training = module.p, module.training
    else:
        x = args[0]
        p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
        training = kwargs.get("training", args[2] if len(args) > 2 else True)
    if training and p > 0:
        raise UnsupportedOperatorError("dropout", detail=f"in training mode with p={p} (random)",
                                       supported="dropout in eval mode or with p=0")
    return x


def bool_dtype(name: str) -> str:
    return leir_dtype(getattr(torch, name))


def _truncated(ctx, x: Tensor) -> Tensor:
    """``x`` converted to i64: LEIR converts an operand to the statement's dtype, which truncates."""
    return ctx.em.elementwise(x.shape, "i64", [x], lambda a: a)


def floor_int(ctx, x: Tensor) -> Tensor:
    """``floor(x)`` as i64 (truncation, one less where that rounded up)."""
    t = _truncated(ctx, x)
    return ctx.em.elementwise(x.shape, "i64", [t, x], lambda ti, a: E.sub(ti, E.ite(E.cmp(a, "<", ti), 1, 0)))


def round_int(ctx, x: Tensor) -> Tensor:
    """``x`` rounded half to even (as ``torch.round`` and C's ``nearbyint``), as i64."""
    low = floor_int(ctx, x)
    frac = ctx.em.elementwise(x.shape, x.dtype, [x, low], E.sub)
    return ctx.em.elementwise(x.shape, "i64", [low, frac], lambda f, d: E.add(
        f, E.ite(E.cmp(d, ">", 0.5), 1, E.ite(E.cmp(d, "<", 0.5), 0, BinOp("%", f, E.lit(2))))))


def _round_decimals(ctx, x: Tensor, decimals: int, round_fn) -> Tensor:
    """PyTorch's rule: ``round(x * 10^d) / 10^d``, or ``round(x / 10^-d) * 10^-d`` for negative ``d``."""
    scale = 10.0 ** abs(decimals)
    inward, outward = (E.mul, E.div) if decimals > 0 else (E.div, E.mul)
    scaled = ew(ctx, [x], lambda a: inward(a, scale))
    return ew(ctx, [round_fn(ctx, scaled)], lambda a: outward(a, scale))


def _rounding(name, *functions, methods=()):
    def emit(ctx, x, *args, **kwargs):
        if not ctx.dtype.startswith("f"):
            return x if x.dtype == ctx.dtype else cast(ctx, x)
        decimals = kwargs.get("decimals", args[0] if args else 0)
        if decimals:
            if name != "round":
                raise UnsupportedOperatorError(name, detail="decimals")
            return _round_decimals(ctx, x, decimals, emit)
        if name == "trunc":
            t = _truncated(ctx, x)
            return ew(ctx, [t], lambda a: a)
        if name == "frac":
            t = _truncated(ctx, x)
            return ew(ctx, [x, t], E.sub)
        if name == "floor":
            return ew(ctx, [floor_int(ctx, x)], lambda a: a)
        if name == "ceil":
            t = _truncated(ctx, x)
            return ew(ctx, [t, x], lambda ti, a: E.add(ti, E.ite(E.cmp(a, ">", ti), 1, 0)))
        return ew(ctx, [round_int(ctx, x)], lambda a: a)

    op(name, *functions, methods=methods)(emit)


_rounding("floor", torch.floor, methods=("floor", "floor_"))
_rounding("ceil", torch.ceil, methods=("ceil", "ceil_"))
_rounding("trunc", torch.trunc, torch.fix, methods=("trunc", "trunc_", "fix"))
_rounding("frac", torch.frac, methods=("frac",))
_rounding("round", torch.round, methods=("round", "round_"))


@op("logaddexp", torch.logaddexp, methods=("logaddexp",))
def logaddexp(ctx, a, b):
    return ew(ctx, [a, b], lambda x, y: E.add(E.maximum(x, y), E.log(E.add(1, E.exp(E.neg(
        E.call("abs", E.sub(x, y))))))))
