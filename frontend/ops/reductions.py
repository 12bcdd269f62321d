"""Reductions and scans: sum/mean/prod/max/min/argmax/argmin/logsumexp/norms/var/std, softmax and
log-softmax, cumsum/cumprod/cummax/cummin/logcumsumexp.

Reductions rely on LEIR's implicit init (a fresh LHS reading itself is a reduction; ``+`` starts at 0,
``max`` at -inf...). Arg-reductions keep PyTorch's *first* index on ties: after the max, a ``min`` over
``if_then_else(A>=D, a, n)`` picks the smallest index reaching it. Scans are O(n) prefix recurrences
whose first element is guarded (``if_then_else(k-1<0, 0, X_{k-1})``).
"""

from __future__ import annotations

import math
from collections import namedtuple

import torch
import torch.nn.functional as F
from torch import nn

from leir.ast import Assign, Block

from .. import expr as E
from ..emit import Tensor, reduced_index
from ..errors import UnsupportedOperatorError
from ..registry import op
from .elementwise import maximum, minimum
from .shape import ValuesIndices


def norm_dims(dim, ndim) -> list[int]:
    if dim is None or dim == [] or dim == ():
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    return sorted({d % max(ndim, 1) for d in dim})


def expand_index(out_vars, dims, ndim, keepdim):
    """Full-shape subscripts for an element of a reduced output (reduced dims read at 0)."""
    it = iter(out_vars)
    idx = []
    for i in range(ndim):
        if i in dims:
            idx.append(E.ZERO)
            if keepdim:
                next(it)
        else:
            idx.append(next(it))
    return idx


def _count(x: Tensor, dims) -> int:
    return int(math.prod(x.shape[d] for d in dims)) if x.shape else 1


def mean_of(ctx, x: Tensor, dims, keepdim, dtype) -> Tensor:
    total = ctx.em.reduce(x, dims, keepdim, "+", dtype)
    n = _count(x, dims)
    return ctx.em.elementwise(total.shape, dtype, [total], lambda s: E.div(s, n))


@op("sum", torch.sum, methods=("sum",))
def sum_(ctx, x, dim=None, keepdim=False, *, dtype=None):
    return ctx.em.reduce(x, norm_dims(dim, x.ndim), keepdim, "+", ctx.dtype)


@op("mean", torch.mean, methods=("mean",))
def mean(ctx, x, dim=None, keepdim=False, *, dtype=None):
    return mean_of(ctx, x, norm_dims(dim, x.ndim), keepdim, ctx.dtype)


@op("prod", torch.prod, methods=("prod",))
def prod(ctx, x, dim=None, keepdim=False, *, dtype=None):
    return ctx.em.reduce(x, norm_dims(dim, x.ndim), keepdim, "*", ctx.dtype)


@op("amax", torch.amax, methods=("amax",))
def amax(ctx, x, dim=(), keepdim=False):
    return ctx.em.reduce(x, norm_dims(dim, x.ndim), keepdim, "max", ctx.dtype)


@op("amin", torch.amin, methods=("amin",))
def amin(ctx, x, dim=(), keepdim=False):
    return ctx.em.reduce(x, norm_dims(dim, x.ndim), keepdim, "min", ctx.dtype)


MinMax = namedtuple("MinMax", ["min", "max"])


@op("aminmax", torch.aminmax, methods=("aminmax",))
def aminmax(ctx, x, *, dim=None, keepdim=False):
    dims = norm_dims(dim, x.ndim)
    low = ctx.em.reduce(x, dims, keepdim, "min", x.dtype)
    return MinMax(low, ctx.em.reduce(x, dims, keepdim, "max", x.dtype))


@op("count_nonzero", torch.count_nonzero, methods=("count_nonzero",))
def count_nonzero(ctx, x, dim=None):
    return ctx.em.reduce(x, norm_dims(dim, x.ndim), False, "+", "i64",
                         value=lambda *vs: E.ite(E.cmp(x.ref(*vs), "!=", 0), 1, 0))


def arg_reduce(ctx, x: Tensor, dim, keepdim, combiner, values: Tensor | None = None):
    """(values, first index reaching them) along ``dim`` (``None``: over the flattened tensor)."""
    dims = norm_dims(dim, x.ndim)
    flat = dim is None
    vals = values or ctx.em.reduce(x, dims, keepdim, combiner, x.dtype)
    if flat:
        out_shape = (1,) * x.ndim if keepdim else ()
    else:
        out_shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape) if keepdim or i not in dims)
    index = ctx.em.fresh(out_shape, "i64")
    n = _count(x, dims)
    cmp = ">=" if combiner == "max" else "<="

    def body(*vs):
        if flat:
            pos = E.ZERO
            stride = 1
            for d in reversed(range(x.ndim)):
                pos = E.iadd(pos, E.imul(vs[d], stride))
                stride *= x.shape[d]
            lhs_idx = [E.ZERO] * len(out_shape)
        else:
            pos = vs[dims[0]]
            lhs_idx = reduced_index(vs, dims, keepdim)
        lhs = index.ref(*lhs_idx)
        # PyTorch's argmax/argmin (and max/min with dim) take a NaN as the extreme: the NaN propagates
        # into ``vals``, no comparison with it holds, so the first NaN's position is the hit
        hit = E.lor(E.cmp(x.ref(*vs), cmp, vals.ref(*reduced_index(vs, dims, keepdim))),
                    E.cmp(x.ref(*vs), "!=", x.ref(*vs)))
        return Assign(lhs, E.minimum(lhs, E.ite(hit, pos, n)))

    ctx.em.block(x.shape, body)
    return vals, index


def _max_min(ctx, combiner, x, dim=None, keepdim=False, other=None):
    if isinstance(dim, Tensor) or other is not None:
        return (maximum if combiner == "max" else minimum)(ctx, x, other if other is not None else dim)
    if dim is None:
        return ctx.em.reduce(x, norm_dims(None, x.ndim), False, combiner, ctx.dtype)
    vals, index = arg_reduce(ctx, x, dim, keepdim, combiner)
    return ValuesIndices(vals, index)


@op("max", torch.max, methods=("max",))
def max_(ctx, x, dim=None, keepdim=False, *, other=None):
    return _max_min(ctx, "max", x, dim, keepdim, other)


@op("min", torch.min, methods=("min",))
def min_(ctx, x, dim=None, keepdim=False, *, other=None):
    return _max_min(ctx, "min", x, dim, keepdim, other)


@op("argmax", torch.argmax, methods=("argmax",))
def argmax(ctx, x, dim=None, keepdim=False):
    return arg_reduce(ctx, x, dim, keepdim, "max")[1]


@op("argmin", torch.argmin, methods=("argmin",))
def argmin(ctx, x, dim=None, keepdim=False):
    return arg_reduce(ctx, x, dim, keepdim, "min")[1]


@op("logsumexp", torch.logsumexp, methods=("logsumexp",))
def logsumexp(ctx, x, dim=None, keepdim=False):
    dims = norm_dims(dim, x.ndim)
    peak = ctx.em.reduce(x, dims, False, "max", ctx.dtype)
    # PyTorch's logsumexp shifts by 0 where the maximum is ±inf (so +inf gives inf, all -inf gives -inf,
    # not the NaN of inf-inf); a NaN maximum stays NaN
    m = ctx.em.elementwise(peak.shape, ctx.dtype, [peak],
                           lambda a: E.ite(E.cmp(E.call("abs", a), "==", math.inf), 0, a))
    s = ctx.em.reduce(x, dims, False, "+", ctx.dtype,
                      value=lambda *vs: E.exp(E.sub(x.ref(*vs), m.ref(*reduced_index(vs, dims, False)))))
    out = ctx.em.fresh(ctx.shape, ctx.dtype)

    def body(*vs):
        idx = [v for i, v in enumerate(vs) if not (keepdim and i in dims)]
        return Assign(out.ref(*vs), E.add(E.log(s.ref(*idx)), m.ref(*idx)))

    ctx.em.block(ctx.shape, body)
    return out


def softmax_into(ctx, x: Tensor, dim: int, log: bool = False) -> Tensor:
    dim %= max(x.ndim, 1)
    dims = [dim] if x.ndim else []
    m = ctx.em.reduce(x, dims, False, "max", ctx.dtype)
    s = ctx.em.reduce(x, dims, False, "+", ctx.dtype,
                      value=lambda *vs: E.exp(E.sub(x.ref(*vs), m.ref(*reduced_index(vs, dims, False)))))
    out = ctx.em.fresh(x.shape, ctx.dtype)

    def body(*vs):
        r = reduced_index(vs, dims, False)
        if log:
            value = E.sub(E.sub(x.ref(*vs), m.ref(*r)), E.log(s.ref(*r)))
        else:
            value = E.div(E.exp(E.sub(x.ref(*vs), m.ref(*r))), s.ref(*r))
        return Assign(out.ref(*vs), value)

    ctx.em.block(x.shape, body)
    return out


def _softmax_args(ctx, args, kwargs):
    if ctx.module is not None:
        module, x = args[0], args[1]
        dim = module.dim
    else:
        x = args[0]
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    return x, dim


@op("softmax", F.softmax, torch.softmax, methods=("softmax",), modules=(nn.Softmax,))
def softmax(ctx, *args, **kwargs):
    x, dim = _softmax_args(ctx, args, kwargs)
    return softmax_into(ctx, x, dim)


@op("softmin", F.softmin, modules=(nn.Softmin,))
def softmin(ctx, *args, **kwargs):
    x, dim = _softmax_args(ctx, args, kwargs)
    negated = ctx.em.elementwise(x.shape, ctx.dtype, [x], E.neg)
    return softmax_into(ctx, negated, dim)


@op("softmax2d", modules=(nn.Softmax2d,))
def softmax2d(ctx, module, x):
    return softmax_into(ctx, x, -3)


@op("log_softmax", F.log_softmax, torch.log_softmax, methods=("log_softmax",), modules=(nn.LogSoftmax,))
def log_softmax(ctx, *args, **kwargs):
    x, dim = _softmax_args(ctx, args, kwargs)
    return softmax_into(ctx, x, dim, log=True)


def vector_norm(ctx, x: Tensor, p, dims, keepdim, dtype) -> Tensor:
    if p in (2, 2.0, "fro", None):
        s = ctx.em.reduce(x, dims, keepdim, "+", dtype, value=lambda *vs: E.mul(x.ref(*vs), x.ref(*vs)))
        return ctx.em.elementwise(s.shape, dtype, [s], E.sqrt)
    if p in (1, 1.0):
        return ctx.em.reduce(x, dims, keepdim, "+", dtype, value=lambda *vs: E.call("abs", x.ref(*vs)))
    if p == math.inf or p == "inf":
        return ctx.em.reduce(x, dims, keepdim, "max", dtype, value=lambda *vs: E.call("abs", x.ref(*vs)))
    if p == -math.inf:
        return ctx.em.reduce(x, dims, keepdim, "min", dtype, value=lambda *vs: E.call("abs", x.ref(*vs)))
    if isinstance(p, int | float) and p > 0:
        s = ctx.em.reduce(x, dims, keepdim, "+", dtype,
                          value=lambda *vs: E.pow_(E.call("abs", x.ref(*vs)), p))
        return ctx.em.elementwise(s.shape, dtype, [s], lambda a: E.pow_(a, 1.0 / p))
    raise UnsupportedOperatorError("norm", detail=f"p={p!r}", supported="p in 1, 2, 'fro', inf, -inf, >0")


@op("norm", torch.norm, methods=("norm",))
def norm(ctx, x, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "nuc":
        raise UnsupportedOperatorError("norm", detail="nuclear norm")
    return vector_norm(ctx, x, p, norm_dims(dim, x.ndim), keepdim, ctx.dtype)


@op("vector_norm", torch.linalg.vector_norm)
def linalg_vector_norm(ctx, x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return vector_norm(ctx, x, ord, norm_dims(dim, x.ndim), keepdim, ctx.dtype)


@op("linalg_norm", torch.linalg.norm)
def linalg_norm(ctx, x, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A matrix norm when ``dim`` is a pair (or ``ord`` is given for a matrix), else a vector norm."""
    pair = isinstance(dim, list | tuple) and len(dim) == 2
    if pair or (dim is None and ord is not None and x.ndim == 2):
        return matrix_norm_into(ctx, x, "fro" if ord is None else ord, dim or (-2, -1), keepdim)
    return vector_norm(ctx, x, 2 if ord is None else ord, norm_dims(dim, x.ndim), keepdim, ctx.dtype)


@op("matrix_norm", torch.linalg.matrix_norm)
def matrix_norm(ctx, x, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    return matrix_norm_into(ctx, x, ord, dim, keepdim)


def matrix_norm_into(ctx, x: Tensor, ord, dim, keepdim: bool) -> Tensor:
    """Frobenius, or the max/min (``±1``: over columns, ``±inf``: over rows) of absolute row/column sums.

    The spectral and nuclear norms need singular values, which LEIR cannot compute: a clear error.
    """
    rows, cols = (d % x.ndim for d in dim)
    if ord == "fro":
        return vector_norm(ctx, x, 2, sorted((rows, cols)), keepdim, ctx.dtype)
    if ord not in (1, -1, math.inf, -math.inf):
        raise UnsupportedOperatorError("matrix norm", detail=f"ord={ord!r} (needs singular values)",
                                       supported="ord 'fro', 1, -1, inf, -inf")
    summed = rows if ord in (1, -1) else cols
    sums = ctx.em.reduce(x, [summed], True, "+", ctx.dtype, value=lambda *vs: E.call("abs", x.ref(*vs)))
    return ctx.em.reduce(sums, [rows, cols], keepdim, "max" if ord > 0 else "min", ctx.dtype)


def variance(ctx, x: Tensor, dims, correction, keepdim, dtype) -> Tensor:
    m = mean_of(ctx, x, dims, True, dtype)
    n = _count(x, dims)

    def sq(*vs):
        d = E.sub(x.ref(*vs), m.ref(*reduced_index(vs, dims, True)))
        return E.mul(d, d)

    s = ctx.em.reduce(x, dims, keepdim, "+", dtype, value=sq)
    return ctx.em.elementwise(s.shape, dtype, [s], lambda a: E.div(a, max(n - correction, 0)))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@op("var", torch.var, methods=("var",))
def var(ctx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return variance(ctx, x, norm_dims(dim, x.ndim), _correction(unbiased, correction), keepdim, ctx.dtype)


@op("std", torch.std, methods=("std",))
def std(ctx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    v = variance(ctx, x, norm_dims(dim, x.ndim), _correction(unbiased, correction), keepdim, ctx.dtype)
    return ctx.em.elementwise(v.shape, ctx.dtype, [v], E.sqrt)


def _scan_loops(ctx, x: Tensor, dim: int):
    """Loops with the scanned dim innermost; the subscripts of the element and of its predecessor."""
    order = [d for d in range(x.ndim) if d != dim] + [dim]
    loops, variables = ctx.em.loops([x.shape[d] for d in order], bind=order[0] != dim)
    vs = [None] * x.ndim
    for d, v in zip(order, variables, strict=True):
        vs[d] = v
    prev = list(vs)
    prev[dim] = E.isub(vs[dim], 1)
    return loops, vs, prev


def _first(k, init, previous):
    """The predecessor's value, or ``init`` at the first element (the guard of a prefix recurrence)."""
    return E.ite(E.cmp(E.isub(k, 1), "<", 0), init, previous)


def _logaddexp(p, v):
    """``log(exp(p)+exp(v))`` without overflow."""
    return E.add(E.maximum(p, v), E.log(E.add(1, E.exp(E.neg(E.call("abs", E.sub(p, v)))))))


#: A scan's step: (previous, element) → new value, and its identity.
SCANS = {"+": (E.add, 0), "*": (E.mul, 1), "logaddexp": (_logaddexp, -math.inf),
         "max": (E.maximum, -math.inf), "min": (E.minimum, math.inf)}


def scan(ctx, x: Tensor, dim: int, combiner: str) -> Tensor:
    """Inclusive prefix scan along ``dim`` as a guarded recurrence, the scanned loop innermost."""
    dim %= max(x.ndim, 1)
    out = ctx.em.fresh(x.shape, ctx.dtype)
    step, init = SCANS[combiner]
    loops, vs, prev = _scan_loops(ctx, x, dim)
    value = step(_first(vs[dim], init, out.ref(*prev)), x.ref(*vs))
    ctx.em.blocks.append(Block(loops, (Assign(out.ref(*vs), value),)))
    return out


def scan_with_index(ctx, x: Tensor, dim: int, combiner: str) -> ValuesIndices:
    """cummax/cummin: the running extreme, then where it was last reached. ``x >= running max`` (after
    the update) is PyTorch's ``x >= previous max``, so a tie moves the index forward as in PyTorch."""
    dim %= max(x.ndim, 1)
    step, init = SCANS[combiner]
    values = ctx.em.fresh(x.shape, x.dtype)
    index = ctx.em.fresh(x.shape, "i64")
    loops, vs, prev = _scan_loops(ctx, x, dim)
    k = vs[dim]
    reaches = E.cmp(x.ref(*vs), ">=" if combiner == "max" else "<=", values.ref(*vs))
    statements = (
        Assign(values.ref(*vs), step(_first(k, init, values.ref(*prev)), x.ref(*vs))),
        Assign(index.ref(*vs), E.ite(reaches, k, _first(k, 0, index.ref(*prev)))),
    )
    ctx.em.blocks.append(Block(loops, statements))
    return ValuesIndices(values, index)


@op("cumsum", torch.cumsum, methods=("cumsum", "cumsum_"))
def cumsum(ctx, x, dim, *, dtype=None):
    if x.dtype != ctx.dtype:
        from .elementwise import cast

        x = cast(ctx, x)
    return scan(ctx, x, dim, "+")


@op("cumprod", torch.cumprod, methods=("cumprod", "cumprod_"))
def cumprod(ctx, x, dim, *, dtype=None):
    return scan(ctx, x, dim, "*")


@op("logcumsumexp", torch.logcumsumexp, methods=("logcumsumexp",))
def logcumsumexp(ctx, x, dim):
    return scan(ctx, x, dim, "logaddexp")


@op("cummax", torch.cummax, methods=("cummax",))
def cummax(ctx, x, dim):
    return scan_with_index(ctx, x, dim, "max")


@op("cummin", torch.cummin, methods=("cummin",))
def cummin(ctx, x, dim):
    return scan_with_index(ctx, x, dim, "min")


def _bool_reduce(ctx, x: Tensor, dim, keepdim, combiner: str) -> Tensor:
    """``any``/``all``: a max/min over 0/1 flags in i64, then the bool result."""
    dims = norm_dims(dim, x.ndim)
    flags = ctx.em.reduce(x, dims, keepdim, combiner, "i64",
                          value=lambda *vs: E.ite(E.cmp(x.ref(*vs), "!=", 0), 1, 0))
    return ctx.em.elementwise(flags.shape, "bool", [flags], lambda f: E.ite(E.cmp(f, "!=", 0), 1, 0))


@op("any", torch.any, methods=("any",))
def any_(ctx, x, dim=None, keepdim=False):
    return _bool_reduce(ctx, x, dim, keepdim, "max")


@op("all", torch.all, methods=("all",))
def all_(ctx, x, dim=None, keepdim=False):
    return _bool_reduce(ctx, x, dim, keepdim, "min")


@op("var_mean", torch.var_mean, torch.std_mean)
def var_mean(ctx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    dims = norm_dims(dim, x.ndim)
    v = variance(ctx, x, dims, _correction(unbiased, correction), keepdim, x.dtype)
    if ctx.node.target is torch.std_mean:
        v = ctx.em.elementwise(v.shape, x.dtype, [v], E.sqrt)
    return (v, mean_of(ctx, x, dims, keepdim, x.dtype))


@op("trace", torch.trace, methods=("trace",))
def trace_(ctx, x):
    n = min(x.shape)
    return ctx.em.reduce(None, [0], False, "+", ctx.dtype, shape=(n,), value=lambda i: x.ref(i, i))
