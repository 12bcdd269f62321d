"""Sampling: grid_sample (bilinear/nearest; zeros/border/reflection; both align_corners), affine_grid, and
the interpolate modes whose weights are not plain linear ones (bicubic, antialias=True).

grid_sample reads the input at positions the grid holds, so its corners are integer tensors computed
from the grid (``floor``, ``round``) and read through gathers, each under an in-bounds guard (PyTorch adds
nothing for an out-of-bounds corner, whatever the padding). Coordinates follow ATen's GridSampler.h step
by step: unnormalise, then clip (border) or reflect-and-clip (reflection).

Resizing weights depend on shapes only. For bicubic and antialiased resizing they are taken from PyTorch
itself: the resize is linear and separable, so running the very same ``F.interpolate`` call on one-hot
inputs along one spatial dim gives that dim's (output × input) weight matrix exactly; its nonzero taps
become small index/weight constants and the program applies one pass per spatial dim. The one-hot inputs
have the program's dtype: PyTorch computes the source coordinates and the cubic coefficients in that
dtype's arithmetic (float for f32/f16, with the FMAs its compiler contracted), and a weight computed in
float64 and rounded differs from them by several ulps — enough, with align_corners or a non-integer
scale, for a correct translation to fail against PyTorch by 7× its error bound (issue 45).
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
import torch.nn.functional as F

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op
from .elementwise import floor_int, round_int

NP_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


# ------------------------------------------------------------------------------------------ grid_sample


def _component(ctx, grid: Tensor, c: int, size: int, padding: str, align: bool) -> Tensor:
    """Source coordinate along one spatial dim, as GridSampler.h computes it, for every grid point."""
    dtype = grid.dtype
    shape = grid.shape[:-1]
    coord = ctx.em.fresh(shape, dtype)

    def unnormalise(*vs):
        g = grid.ref(*vs, c)
        value = (E.mul(E.div(E.add(g, 1), 2), size - 1) if align
                 else E.div(E.sub(E.mul(E.add(g, 1), size), 1), 2))
        return Assign(coord.ref(*vs), value)

    ctx.em.block(shape, unnormalise)
    if padding == "border":
        return _clip(ctx, coord, size)
    if padding == "reflection":
        low, high = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
        return _clip(ctx, _reflect(ctx, coord, low, high), size)
    return coord


def _clip(ctx, coord: Tensor, size: int) -> Tensor:
    return ctx.em.elementwise(coord.shape, coord.dtype, [coord],
                              lambda a: E.minimum(E.maximum(a, 0), size - 1))


def _reflect(ctx, coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """ATen's ``reflect_coordinates``: fold ``coord`` into [low, high] by mirroring at both ends.

    ``span`` is an integer here (``size`` or ``size - 1``), so ``floor(d / span)`` of the non-negative
    distance ``d`` is the integer division of ``trunc(d)``: LEIR's conversion to i64 then ``/``.
    """
    if twice_low == twice_high:
        return ctx.em.fill(coord.shape, coord.dtype, 0)
    low = twice_low / 2
    span = (twice_high - twice_low) // 2
    distance = ctx.em.elementwise(coord.shape, coord.dtype, [coord], lambda a: E.call("abs", E.sub(a, low)))
    flips = ctx.em.elementwise(coord.shape, "i64", [distance], lambda d: E.div(d, span))

    def fold(d, f):
        extra = E.sub(d, E.mul(f, span))
        even = E.cmp(E.imod(f, 2), "==", 0)
        return E.ite(even, E.add(extra, low), E.add(E.sub(span, extra), low))

    return ctx.em.elementwise(coord.shape, coord.dtype, [distance, flips], fold)


def _inside(index_ref, size: int):
    return E.chain(0, "<=", index_ref, "<", size)


@op("grid_sample", F.grid_sample)
def grid_sample(ctx, x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest"):
        raise UnsupportedOperatorError("grid_sample", detail=f"mode={mode!r}", supported="bilinear, nearest")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise UnsupportedOperatorError("grid_sample", detail=f"padding_mode={padding_mode!r}")
    spatial = x.shape[2:]
    d = len(spatial)
    align = bool(align_corners)
    # grid component c addresses spatial dim d-1-c (x is the width, the last one)
    coords = [_component(ctx, grid, c, spatial[d - 1 - c], padding_mode, align) for c in range(d)]
    coords = coords[::-1]  # now coords[k] goes with spatial dim k
    out = ctx.em.fresh(ctx.shape, ctx.dtype)
    if mode == "nearest":
        nearest = [round_int(ctx, c) for c in coords]

        def pick(n, ch, *o):
            idx = [t.ref(n, *o) for t in nearest]
            inside = None
            for k, i in enumerate(idx):
                inside = E.land(inside, _inside(i, spatial[k]))
            return Assign(out.ref(n, ch, *o), E.ite(inside, x.ref(n, ch, *idx), 0))

        ctx.em.block(ctx.shape, pick)
        return out
    lows = [floor_int(ctx, c) for c in coords]
    highs = [ctx.em.elementwise(c.shape, c.dtype, [c, lo], E.sub) for c, lo in zip(coords, lows, strict=True)]

    def blend(n, ch, *o):
        total = None
        for corner in itertools.product((0, 1), repeat=d):
            idx, inside, weight = [], None, None
            for k, up in enumerate(corner):
                i = lows[k].ref(n, *o)
                i = E.iadd(i, 1) if up else i
                frac = highs[k].ref(n, *o)
                w = frac if up else E.sub(1, frac)
                idx.append(i)
                inside = E.land(inside, _inside(i, spatial[k]))
                weight = w if weight is None else E.mul(weight, w)
            term = E.ite(inside, E.mul(weight, x.ref(n, ch, *idx)), 0)
            total = term if total is None else E.add(total, term)
        return Assign(out.ref(n, ch, *o), total)

    ctx.em.block(ctx.shape, blend)
    return out


@op("affine_grid", F.affine_grid)
def affine_grid(ctx, theta, size, align_corners=None):
    """``grid[n, *o, k] = sum_j theta[n, k, j] * base[*o, j]``, base = (x, y[, z], 1) on [-1, 1]."""
    spatial = list(size[2:])
    d = len(spatial)
    align = bool(align_corners)
    lines = []
    for k, n in enumerate(reversed(spatial)):  # x (width) first
        if align:
            values = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        else:
            values = (np.arange(n) * 2.0 + 1.0) / n - 1.0
        key = ("affine_grid", ctx.node.name, k)
        lines.append(ctx.em.add_known(key, values.astype(NP_FLOAT[ctx.dtype]), ctx.dtype, "const"))
    out = ctx.em.fresh(ctx.shape, ctx.dtype)

    def body(n, *rest):
        o, k = list(rest[:-1]), rest[-1]
        total = theta.ref(n, k, d)
        for j in range(d):
            coordinate = lines[j].ref(o[d - 1 - j])
            total = E.add(E.mul(theta.ref(n, k, j), coordinate), total)
        return Assign(out.ref(n, *o, k), total)

    ctx.em.block(ctx.shape, body)
    return out


# -------------------------------------------------------------------------- resizing by PyTorch's weights


TORCH_FLOAT = {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64}


def resize_weights(call, x_shape, out_shape, dim: int, dtype: str = "f64") -> np.ndarray:
    """The (out × in) weights of spatial ``dim`` of the resize ``call`` (F.interpolate with fixed args),
    as PyTorch's kernel computes them for inputs of ``dtype``: each is one product with 1 and sums with
    zeros, so exact."""
    n_in = x_shape[dim]
    shape = [n_in, 1, *x_shape[2:]]
    basis = torch.zeros(shape, dtype=TORCH_FLOAT[dtype])
    for k in range(n_in):
        index = [k, 0] + [slice(None)] * (len(x_shape) - 2)
        index[dim] = k
        basis[tuple(index)] = 1.0
    with torch.no_grad():
        result = call(basis)
    rest = [0] * (len(x_shape) - 2)
    weights = np.zeros((out_shape[dim], n_in))
    for o in range(out_shape[dim]):
        at = list(rest)
        at[dim - 2] = o
        weights[o] = result[(slice(None), 0, *at)].double().numpy()
    return weights


def taps(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per output position, the input indices with a nonzero weight and the weights, padded to one width
    (index 0, weight 0)."""
    rows = [np.nonzero(np.abs(w) > 0)[0] for w in weights]
    width = max(1, max(len(r) for r in rows))
    index = np.zeros((len(rows), width), dtype=np.int64)
    weight = np.zeros((len(rows), width))
    for o, cols in enumerate(rows):
        index[o, :len(cols)] = cols
        weight[o, :len(cols)] = weights[o, cols]
    return index, weight


def separable_resize(ctx, x: Tensor, call) -> Tensor:
    """One pass per spatial dim: ``y[.., o, ..] = sum_t w[o, t] * x[.., index[o, t], ..]``."""
    out_shape = ctx.shape
    current = x
    for dim in range(2, x.ndim):
        weights = resize_weights(call, x.shape, out_shape, dim, ctx.dtype)
        if x.shape[dim] == out_shape[dim] and np.array_equal(weights, np.eye(x.shape[dim])):
            continue
        index, weight = taps(weights)
        key = ("resize", ctx.node.name, dim)
        index_t = ctx.em.add_known(key + ("index",), index, "i64", "const")
        weight_t = ctx.em.add_known(key + ("weight",), weight.astype(NP_FLOAT[ctx.dtype]), ctx.dtype, "const")
        src = current
        shape = list(src.shape)
        shape[dim] = out_shape[dim]

        def value(*vs, src=src, dim=dim, index_t=index_t, weight_t=weight_t):
            o, t = list(vs[:-1]), vs[-1]
            at = list(o)
            at[dim] = index_t.ref(o[dim], t)
            return E.mul(weight_t.ref(o[dim], t), src.ref(*at))

        current = ctx.em.reduce(None, [len(shape)], False, "+", ctx.dtype, value=value,
                                shape=(*shape, index.shape[1]))
    if current is x:
        current = ctx.em.elementwise(x.shape, x.dtype, [x], lambda a: a)
    return current


def interpolate_by_weights(ctx, x: Tensor, size, scale, mode, align, recompute, antialias) -> Tensor:
    """bicubic (and antialiased bilinear/bicubic) resizing, with the weights of PyTorch's own kernel."""
    def call(basis):
        return F.interpolate(basis, size=size, scale_factor=scale, mode=mode, align_corners=align,
                             recompute_scale_factor=recompute, antialias=antialias)

    return separable_resize(ctx, x, call)
