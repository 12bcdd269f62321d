"""Max and average pooling (1-3d, stride, padding, dilation, ceil mode) and adaptive average/max pooling.

A padded input (``-inf`` for max, 0 for average) is copied first when any window leaves the input;
each output element is then a reduction over its window. Adaptive pooling windows have varying sizes:
the loop runs over the largest window with an ``if_then_else`` guard, and the per-window element
counts, which depend only on shapes, become a small constant tensor.
"""

from __future__ import annotations

import math

import numpy as np
import torch.nn.functional as F
from torch import nn

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op
from .conv import pad_copy, tup


def _args(ctx, args, kwargs, names, defaults, module_attrs=None):
    if ctx.module is not None:
        m, x = args[0], args[1]
        return [x] + [getattr(m, a, d) for a, d in zip(names[1:], defaults[1:], strict=True)]
    return [kwargs.get(nm, args[i] if i < len(args) else d)
            for i, (nm, d) in enumerate(zip(names, defaults, strict=True))]


def _padded(ctx, x: Tensor, n: int, out_shape, kernel, stride, padding, dilation, fill) -> Tensor:
    """The input padded with ``fill`` as far as the windows of ``out_shape`` read (no further)."""
    lead = x.ndim - n
    reads = [(o - 1) * s + (k - 1) * d + 1
             for o, s, k, d in zip(out_shape[lead:], stride, kernel, dilation, strict=True)]
    return pad_copy(ctx, x, lead, padding, reads, fill)


def _window_offsets(lead: int, n: int, out_ndim: int, stride, dilation, vs) -> list:
    """Padded-input subscripts of the window element ``vs`` = (output subscripts..., kernel offsets...)."""
    return [E.iadd(E.imul(vs[lead + j], stride[j]), E.imul(vs[out_ndim + j], dilation[j])) for j in range(n)]


def _window_read(src: Tensor, lead: int, n: int, out_ndim: int, stride, dilation, vs):
    return src.ref(*vs[:lead], *_window_offsets(lead, n, out_ndim, stride, dilation, vs))


def _window_pool(ctx, x: Tensor, n: int, kernel, stride, padding, dilation, combiner, fill, out_shape=None):
    lead = x.ndim - n
    out_shape = tuple(ctx.shape if out_shape is None else out_shape)
    src = _padded(ctx, x, n, out_shape, kernel, stride, padding, dilation, fill)
    return ctx.em.reduce(None, list(range(len(out_shape), len(out_shape) + n)), False, combiner, x.dtype,
                         shape=out_shape + tuple(kernel),
                         value=lambda *vs: _window_read(src, lead, n, len(out_shape), stride, dilation, vs))


def _argmax_positions(ctx, x: Tensor, values: Tensor, n: int, kernel, stride, padding, dilation) -> Tensor:
    """``return_indices``: the flat spatial index (in the unpadded input) of each window's first maximum.

    PyTorch keeps the first maximum in window order, which is the smallest flat index reaching it, so
    this is a ``min`` over the window of the index where an element inside the input equals the maximum.
    """
    lead, out_ndim = x.ndim - n, values.ndim
    sizes = x.shape[lead:]
    src = _padded(ctx, x, n, values.shape, kernel, stride, padding, dilation, -math.inf)

    def candidate(*vs):
        offsets = _window_offsets(lead, n, out_ndim, stride, dilation, vs)
        pos = [E.isub(o, padding[j]) for j, o in enumerate(offsets)]
        cond = E.cmp(src.ref(*vs[:lead], *offsets), ">=", values.ref(*vs[:out_ndim]))
        for j, p in enumerate(pos):
            cond = E.land(cond, E.chain(0, "<=", p, "<", sizes[j]))
        flat = E.isum([E.imul(p, math.prod(sizes[j + 1:])) for j, p in enumerate(pos)])
        return E.ite(cond, flat, math.prod(sizes))

    return ctx.em.reduce(None, list(range(out_ndim, out_ndim + n)), False, "min", "i64",
                         shape=tuple(values.shape) + tuple(kernel), value=candidate)


MAX_NAMES = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")
MAX_DEFAULTS = (None, None, None, 0, 1, False, False)


@op("max_pool", F.max_pool1d, F.max_pool2d, F.max_pool3d, F.max_pool1d_with_indices,
    F.max_pool2d_with_indices, F.max_pool3d_with_indices, modules=(nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d))
def max_pool(ctx, *args, **kwargs):
    x, kernel, stride, padding, dilation, ceil_mode, return_indices = _args(ctx, args, kwargs, MAX_NAMES,
                                                                            MAX_DEFAULTS)
    n = _spatial_dims(ctx)
    kernel = tup(kernel, n)
    stride = tup(stride if stride not in (None, []) else kernel, n)
    padding, dilation = tup(padding, n), tup(dilation, n)
    with_indices = return_indices or "with_indices" in getattr(ctx.node.target, "__name__", "")
    out_shape = tuple(ctx.real[0].shape) if with_indices else ctx.shape
    values = _window_pool(ctx, x, n, kernel, stride, padding, dilation, "max", -math.inf, out_shape)
    if not with_indices:
        return values
    return values, _argmax_positions(ctx, x, values, n, kernel, stride, padding, dilation)


def _spatial_dims(ctx) -> int:
    name = ""
    name = type(ctx.module).__name__ if ctx.module is not None else getattr(ctx.node.target, "__name__", "")
    for k in ("1d", "2d", "3d"):
        if k in name:
            return int(k[0])
    raise UnsupportedOperatorError(name, detail="cannot tell the number of spatial dims")


LP_NAMES = ("input", "norm_type", "kernel_size", "stride", "ceil_mode")
LP_DEFAULTS = (None, None, None, None, False)


@op("lp_pool", F.lp_pool1d, F.lp_pool2d, F.lp_pool3d, modules=(nn.LPPool1d, nn.LPPool2d, nn.LPPool3d))
def lp_pool(ctx, *args, **kwargs):
    """``(sum of x^p over the window)^(1/p)`` (PyTorch's avg-pool form times the window size)."""
    x, p, kernel, stride, ceil_mode = _args(ctx, args, kwargs, LP_NAMES, LP_DEFAULTS)
    if ceil_mode:  # partial windows: PyTorch's average times the full window size is not their sum
        raise UnsupportedOperatorError("lp_pool", detail="ceil_mode=True", supported="ceil_mode=False")
    n = _spatial_dims(ctx)
    kernel = tup(kernel, n)
    stride = tup(stride if stride not in (None, []) else kernel, n)
    powered = ctx.em.elementwise(x.shape, ctx.dtype, [x], lambda a: E.mul(a, a) if p == 2 else E.pow_(a, p))
    total = _window_pool(ctx, powered, n, kernel, stride, [0] * n, [1] * n, "+", 0)
    return ctx.em.elementwise(total.shape, ctx.dtype, [total],
                              lambda s: E.sqrt(s) if p == 2 else E.pow_(s, 1 / p))


AVG_NAMES = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
             "divisor_override")
AVG_DEFAULTS = (None, None, None, 0, False, True, None)


@op("avg_pool", F.avg_pool1d, F.avg_pool2d, F.avg_pool3d,
    modules=(nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d))
def avg_pool(ctx, *args, **kwargs):
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor = _args(ctx, args, kwargs, AVG_NAMES,
                                                                              AVG_DEFAULTS)
    n = _spatial_dims(ctx)
    kernel = tup(kernel, n)
    stride = tup(stride if stride not in (None, []) else kernel, n)
    padding = tup(padding, n)
    lead = x.ndim - n
    total = _window_pool(ctx, x, n, kernel, stride, padding, [1] * n, "+", 0)
    if divisor:
        return ctx.em.elementwise(total.shape, ctx.dtype, [total], lambda s: E.div(s, divisor))
    # PyTorch's divisor: window clipped to the padded input (count_include_pad) or to the input
    counts = np.ones(ctx.shape[lead:], dtype=np.float64)
    uniform = True
    for j in range(n):
        size = x.shape[lead + j]
        per = []
        for o in range(ctx.shape[lead + j]):
            start = o * stride[j] - padding[j]
            end = min(start + kernel[j], size + padding[j])
            if not count_include_pad:
                start, end = max(start, 0), min(end, size)
            per.append(end - start)
        shape = [1] * n
        shape[j] = len(per)
        counts = counts * np.array(per, dtype=np.float64).reshape(shape)
        uniform &= len(set(per)) == 1
    if uniform:
        k = int(counts.reshape(-1)[0])
        return ctx.em.elementwise(total.shape, ctx.dtype, [total], lambda s: E.div(s, k))
    const = ctx.em.add_known(("pool-counts", ctx.node.name), counts.astype(_np_dtype(ctx.dtype)), ctx.dtype,
                             "const")
    return ctx.em.elementwise(total.shape, ctx.dtype, [total, const], E.div)


def _np_dtype(dtype: str):
    return {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(dtype, np.float64)


def _adaptive(ctx, x: Tensor, n: int, combiner: str):
    lead = x.ndim - n
    out_shape = ctx.shape
    starts, ends, kmax = [], [], []
    for j in range(n):
        size, outs = x.shape[lead + j], out_shape[lead + j]
        st = [(o * size) // outs for o in range(outs)]
        en = [-((-(o + 1) * size) // outs) for o in range(outs)]
        starts.append(st)
        ends.append(en)
        kmax.append(max(e - s for s, e in zip(st, en, strict=True)))
    fill = 0 if combiner == "+" else -math.inf

    def value(*vs):
        idx = list(vs[:lead])
        cond = None
        for j in range(n):
            size, outs = x.shape[lead + j], out_shape[lead + j]
            o, k = vs[lead + j], vs[len(out_shape) + j]
            if size % outs == 0:
                idx.append(E.iadd(E.imul(o, size // outs), k))
                continue
            start = E.ifloordiv(E.imul(o, size), outs)
            end = E.ifloordiv(E.iadd(E.imul(E.iadd(o, 1), size), outs - 1), outs)
            pos = E.iadd(start, k)
            idx.append(pos)
            cond = E.land(cond, E.cmp(pos, "<", end))
        ref = x.ref(*idx)
        return ref if cond is None else E.ite(cond, ref, fill)

    total = ctx.em.reduce(None, list(range(len(out_shape), len(out_shape) + n)), False, combiner, ctx.dtype,
                          shape=tuple(out_shape) + tuple(kmax), value=value)
    if combiner == "max":
        return total
    counts = np.ones(out_shape[lead:], dtype=np.float64)
    for j in range(n):
        shape = [1] * n
        shape[j] = out_shape[lead + j]
        per = np.array([e - s for s, e in zip(starts[j], ends[j], strict=True)], dtype=np.float64)
        counts = counts * per.reshape(shape)
    flat = counts.reshape(-1)
    if (flat == flat[0]).all():
        k = int(flat[0])
        return ctx.em.elementwise(total.shape, ctx.dtype, [total], lambda s: E.div(s, k))
    const = ctx.em.add_known(("pool-counts", ctx.node.name), counts.astype(_np_dtype(ctx.dtype)), ctx.dtype,
                             "const")
    return ctx.em.elementwise(total.shape, ctx.dtype, [total, const], E.div)


@op("adaptive_avg_pool", F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d,
    modules=(nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d))
def adaptive_avg_pool(ctx, *args, **kwargs):
    x = args[1] if ctx.module is not None else args[0]
    return _adaptive(ctx, x, _spatial_dims(ctx), "+")


@op("adaptive_max_pool", F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d,
    modules=(nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d))
def adaptive_max_pool(ctx, *args, **kwargs):
    x = args[1] if ctx.module is not None else args[0]
    if (ctx.module is not None and ctx.module.return_indices) or kwargs.get("return_indices"):
        raise UnsupportedOperatorError("adaptive_max_pool", detail="return_indices=True")
    return _adaptive(ctx, x, _spatial_dims(ctx), "max")
