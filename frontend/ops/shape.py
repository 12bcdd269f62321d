"""Layout operators: reshapes, permutations, broadcasts, slicing, joining and splitting, triangles.

Each is materialised as a copy block (as the public converter does), with the index mapping written in
the subscripts: a split dimension reads ``c*16+d``, a merged one ``a//4``/``a%4``, a transpose swaps
subscripts, a slice reads ``start+v*step``, a gather nests an integer tensor reference.
"""

from __future__ import annotations

import operator
from collections import namedtuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op

ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])


def copy_block(ctx, out_shape, dtype, index_fn, src: Tensor, *, cond_fn=None, other=0) -> Tensor:
    """``out[v] = src[index_fn(v)]`` over ``out_shape`` (optionally ``if_then_else(cond, .., other)``)."""
    out = ctx.em.fresh(out_shape, dtype)

    def body(*vs):
        value = src.ref(*index_fn(list(vs)))
        if cond_fn is not None:
            value = E.ite(cond_fn(list(vs)), value, other)
        return Assign(out.ref(*vs), value)

    ctx.em.block(out_shape, body)
    return out


def reshape_indices(in_shape, out_shape, out_vars):
    """Input subscripts that read element ``out_vars`` of a row-major reshape ``in_shape → out_shape``."""
    in_idx: list = [E.ZERO] * len(in_shape)
    ins = [k for k, s in enumerate(in_shape) if s != 1]
    outs = [j for j, s in enumerate(out_shape) if s != 1]
    i = j = 0
    while i < len(ins) or j < len(outs):
        gi, gj = [ins[i]], [outs[j]]
        pi, pj = in_shape[ins[i]], out_shape[outs[j]]
        i += 1
        j += 1
        while pi != pj:
            if pi < pj:
                gi.append(ins[i])
                pi *= in_shape[ins[i]]
                i += 1
            else:
                gj.append(outs[j])
                pj *= out_shape[outs[j]]
                j += 1
        # linear offset of the group, from the output subscripts
        stride = 1
        terms = []
        for d in reversed(gj):
            terms.append(E.imul(out_vars[d], stride))
            stride *= out_shape[d]
        linear = E.isum(reversed(terms))
        stride = 1
        strides = {}
        for d in reversed(gi):
            strides[d] = stride
            stride *= in_shape[d]
        for n, d in enumerate(gi):
            if len(gi) == 1:
                in_idx[d] = linear
                continue
            value = E.ifloordiv(linear, strides[d])
            if n > 0:
                value = E.imod(value, in_shape[d])
            in_idx[d] = value
    return in_idx


def reshape_to(ctx, x: Tensor, out_shape) -> Tensor:
    out_shape = tuple(out_shape)
    if out_shape == x.shape:
        return x
    return copy_block(ctx, out_shape, x.dtype, lambda vs: reshape_indices(x.shape, out_shape, vs), x)


@op("view", torch.reshape, torch.flatten, torch.squeeze, torch.unsqueeze, torch.ravel,
    methods=("view", "reshape", "flatten", "squeeze", "unsqueeze", "view_as", "reshape_as", "unflatten",
             "ravel", "squeeze_", "unsqueeze_"),
    modules=(nn.Flatten, nn.Unflatten))
def view(ctx, *args, **kwargs):
    x = args[1] if ctx.module is not None else args[0]
    return reshape_to(ctx, x, ctx.shape)


def permute_to(ctx, x: Tensor, perm) -> Tensor:
    perm = [p % x.ndim for p in perm]
    if perm == list(range(x.ndim)):
        return x
    out_shape = tuple(x.shape[p] for p in perm)

    def index(vs):
        idx = [None] * x.ndim
        for j, p in enumerate(perm):
            idx[p] = vs[j]
        return idx

    return copy_block(ctx, out_shape, x.dtype, index, x)


@op("permute", torch.permute, methods=("permute",))
def permute(ctx, x, *dims):
    if len(dims) == 1 and isinstance(dims[0], list | tuple):
        dims = tuple(dims[0])
    return permute_to(ctx, x, dims)


@op("transpose", torch.transpose, torch.swapaxes, torch.swapdims,
    methods=("transpose", "swapaxes", "swapdims", "transpose_"))
def transpose(ctx, x, dim0, dim1):
    perm = list(range(x.ndim))
    d0, d1 = dim0 % max(x.ndim, 1), dim1 % max(x.ndim, 1)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute_to(ctx, x, perm)


@op("t", torch.t, methods=("t",))
def t(ctx, x):
    return permute_to(ctx, x, list(reversed(range(x.ndim))))


@op("movedim", torch.movedim, methods=("movedim",))
def movedim(ctx, x, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [s % x.ndim for s in src]
    dst = [d % x.ndim for d in dst]
    rest = [d for d in range(x.ndim) if d not in src]
    perm = [None] * x.ndim
    for s, d in zip(src, dst, strict=True):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return permute_to(ctx, x, perm)


@op("getattr", getattr)
def getattr_(ctx, obj, name):
    if not isinstance(obj, Tensor):
        return getattr(obj, name)
    if name == "T":
        return permute_to(ctx, obj, list(reversed(range(obj.ndim))))
    if name == "mT":
        perm = list(range(obj.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return permute_to(ctx, obj, perm)
    if name in ("data", "real"):
        return obj
    raise UnsupportedOperatorError(f"Tensor.{name}")


@op("expand", torch.broadcast_to, methods=("expand", "expand_as", "broadcast_to"))
def expand(ctx, x, *args, **kwargs):
    shape = ctx.shape
    if shape == x.shape:
        return x
    out = ctx.em.fresh(shape, x.dtype)
    ctx.em.block(shape, lambda *vs: Assign(out.ref(*vs), ctx.em.bref(x, vs, shape)))
    return out


@op("repeat", torch.tile, methods=("repeat", "tile"))
def repeat(ctx, x, *sizes):
    shape = ctx.shape
    offset = len(shape) - x.ndim
    return copy_block(ctx, shape, x.dtype,
                      lambda vs: [E.imod(vs[k + offset], s) if s != shape[k + offset] else vs[k + offset]
                                  for k, s in enumerate(x.shape)], x)


@op("cat", torch.cat, torch.concat, torch.concatenate)
def cat(ctx, tensors, dim=0, *, axis=None):
    dim = axis if axis is not None else dim
    tensors = [t for t in tensors if not (isinstance(t, Tensor) and t.shape == (0,))]
    shape = ctx.shape
    return _join(ctx, tensors, dim % len(shape), shape, ctx.dtype)


@op("stack", torch.stack)
def stack(ctx, tensors, dim=0):
    shape = ctx.shape
    dim %= len(shape)
    out = ctx.em.fresh(shape, ctx.dtype)
    for k, t in enumerate(tensors):
        def body(*vs, t=t, k=k):
            idx = list(vs)
            idx.insert(dim, E.lit(k))
            return Assign(out.ref(*idx), t.ref(*vs))

        ctx.em.block(t.shape, body)
    return out


def slice_along(ctx, x: Tensor, dim: int, start: int, length: int) -> Tensor:
    shape = list(x.shape)
    shape[dim] = length

    def index(vs):
        idx = list(vs)
        idx[dim] = E.iadd(vs[dim], start)
        return idx

    return copy_block(ctx, tuple(shape), x.dtype, index, x)


def _pieces(ctx, x, sizes, dim):
    dim %= x.ndim
    result, start = [], 0
    for size in sizes:
        result.append(slice_along(ctx, x, dim, start, size))
        start += size
    return tuple(result)


@op("split", torch.split, methods=("split",))
def split(ctx, x, split_size_or_sections, dim=0):
    return _pieces(ctx, x, [t.shape[dim] for t in ctx.real], dim)


@op("chunk", torch.chunk, torch.tensor_split, methods=("chunk", "tensor_split"))
def chunk(ctx, x, chunks, dim=0):
    return _pieces(ctx, x, [t.shape[dim] for t in ctx.real], dim)


@op("unbind", torch.unbind, methods=("unbind",))
def unbind(ctx, x, dim=0):
    dim %= x.ndim
    return tuple(select_index(ctx, x, dim, k) for k in range(x.shape[dim]))


def select_index(ctx, x, dim, index):
    dim %= x.ndim
    index %= x.shape[dim]
    shape = x.shape[:dim] + x.shape[dim + 1:]

    def idx(vs):
        out = list(vs)
        out.insert(dim, E.lit(index))
        return out

    return copy_block(ctx, shape, x.dtype, idx, x)


@op("select", torch.select, methods=("select",))
def select(ctx, x, dim, index):
    return select_index(ctx, x, dim, index)


@op("narrow", torch.narrow, methods=("narrow",))
def narrow(ctx, x, dim, start, length):
    dim %= x.ndim
    return slice_along(ctx, x, dim, start % x.shape[dim], length)


@op("getitem", operator.getitem)
def getitem(ctx, x, index):
    if not isinstance(x, Tensor):
        return x[index]
    return index_tensor(ctx, x, index)


def index_tensor(ctx, x: Tensor, index) -> Tensor:
    """Basic and (integer) advanced indexing, following PyTorch's placement rules."""
    items = list(index) if isinstance(index, tuple) else [index]
    for item in items:
        if isinstance(item, Tensor) and item.dtype == "bool":
            raise UnsupportedOperatorError("getitem", detail="boolean-mask indexing (dynamic shape)")
        if not (item is None or item is Ellipsis or isinstance(item, slice | int | Tensor)):
            raise UnsupportedOperatorError("getitem", detail=f"indexing with {type(item).__name__}")
    consuming = sum(1 for it in items if it is not None and it is not Ellipsis)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (x.ndim - consuming)
    else:
        items += [slice(None)] * (x.ndim - consuming)
    adv = [k for k, it in enumerate(items) if isinstance(it, Tensor)]
    basic = [k for k, it in enumerate(items) if it is None or isinstance(it, slice)]
    adv_shape: tuple[int, ...] = ()
    if adv:
        adv_shape = tuple(torch.broadcast_shapes(*[items[k].shape for k in adv]))
        # ints count as advanced indices for PyTorch's "are they adjacent" rule
        positions = [k for k, it in enumerate(items) if isinstance(it, Tensor | int)]
        adjacent = positions == list(range(positions[0], positions[-1] + 1))
        advanced = [("a", j) for j in range(len(adv_shape))]
        if adjacent:
            order = ([("b", k) for k in basic if k < positions[0]] + advanced
                     + [("b", k) for k in basic if k > positions[0]])
        else:
            order = advanced + [("b", k) for k in basic]
    else:
        order = [("b", k) for k in basic]
    position = {o: p for p, o in enumerate(order)}

    def index_fn(vs):
        idx = []
        for k, it in enumerate(items):
            if it is None:
                continue
            size = x.shape[len(idx)]
            if isinstance(it, Tensor):
                adv_vars = [vs[position[("a", j)]] for j in range(len(adv_shape))]
                idx.append(ctx.em.bref(it, adv_vars, adv_shape))
            elif isinstance(it, slice):
                start, _, step = it.indices(size)
                idx.append(E.iadd(E.imul(vs[position[("b", k)]], step), start))
            else:
                idx.append(E.lit(it % size))
        return idx

    return copy_block(ctx, ctx.shape, x.dtype, index_fn, x)


@op("flip", torch.flip, methods=("flip",))
def flip(ctx, x, *dims):
    if len(dims) == 1 and isinstance(dims[0], list | tuple):
        dims = tuple(dims[0])
    dims = {d % x.ndim for d in dims}
    return copy_block(ctx, x.shape, x.dtype,
                      lambda vs: [E.isub(x.shape[k] - 1, v) if k in dims else v for k, v in enumerate(vs)], x)


@op("roll", torch.roll, methods=("roll",))
def roll(ctx, x, shifts, dims=None):
    if dims is None:
        raise UnsupportedOperatorError("roll", detail="without dims")
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    amount = {d % x.ndim: s for s, d in zip(shifts, dims, strict=True)}

    def index(vs):
        out = []
        for k, v in enumerate(vs):
            if k in amount and amount[k] % x.shape[k]:
                out.append(E.imod(E.iadd(v, x.shape[k] - amount[k] % x.shape[k]), x.shape[k]))
            else:
                out.append(v)
        return out

    return copy_block(ctx, x.shape, x.dtype, index, x)


def _triangle(ctx, x, diagonal, upper):
    def cond(vs):
        row, col = vs[-2], vs[-1]
        return E.cmp(col, ">=" if upper else "<=", E.iadd(row, diagonal))

    return copy_block(ctx, x.shape, x.dtype, lambda vs: vs, x, cond_fn=cond)


@op("triu", torch.triu, methods=("triu", "triu_"))
def triu(ctx, x, diagonal=0):
    return _triangle(ctx, x, diagonal, True)


@op("tril", torch.tril, methods=("tril", "tril_"))
def tril(ctx, x, diagonal=0):
    return _triangle(ctx, x, diagonal, False)


@op("diag", torch.diag, methods=("diag",))
def diag(ctx, x, diagonal=0):
    if x.ndim == 1:
        shape = ctx.shape
        out = ctx.em.fresh(shape, x.dtype)
        if diagonal == 0:  # the public data's form
            ctx.em.block(shape, lambda row, col: Assign(
                out.ref(row, col), E.ite(E.cmp(col, "==", row), x.ref(row), 0)))
        else:  # zero the matrix, then scatter the vector onto the shifted diagonal
            ctx.em.block(shape, lambda row, col: Assign(out.ref(row, col), E.ZERO))
            ctx.em.block(x.shape, lambda i: Assign(
                out.ref(i, E.iadd(i, diagonal)) if diagonal > 0 else out.ref(E.iadd(i, -diagonal), i),
                x.ref(i)))
        return out
    if diagonal >= 0:
        return copy_block(ctx, ctx.shape, x.dtype, lambda vs: [vs[0], E.iadd(vs[0], diagonal)], x)
    return copy_block(ctx, ctx.shape, x.dtype, lambda vs: [E.iadd(vs[0], -diagonal), vs[0]], x)


@op("diagonal", torch.diagonal, methods=("diagonal",))
def diagonal(ctx, x, offset=0, dim1=0, dim2=1):
    if x.ndim != 2 or {dim1 % 2, dim2 % 2} != {0, 1}:
        raise UnsupportedOperatorError("diagonal", detail="only of a matrix")
    return diag(ctx, x, offset)


@op("fill_like", torch.zeros_like, torch.ones_like, torch.full_like,
    methods=("new_zeros", "new_ones", "new_full", "zero_", "fill_"))
def fill_like(ctx, *args, **kwargs):
    """A uniform tensor of the node's shape; the value comes from the call, never from the data."""
    target = ctx.node.target
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if name in ("zeros_like", "new_zeros", "zero_"):
        value = 0
    elif name in ("ones_like", "new_ones"):
        value = 1
    elif name == "full_like":
        value = kwargs.get("fill_value", args[1] if len(args) > 1 else None)
    elif name == "new_full":
        value = kwargs.get("fill_value", args[2] if len(args) > 2 else None)
    else:  # fill_
        value = kwargs.get("value", args[1] if len(args) > 1 else None)
    if not isinstance(value, int | float | bool):
        raise UnsupportedOperatorError(name, detail="fill value that is not a Python number")
    return ctx.em.fill(ctx.shape, ctx.dtype, value)


#: Pad modules that repeat the tensor's own values at its edges, by the F.pad mode they stand for.
EDGE_PAD_MODULES = {
    **dict.fromkeys((nn.ReflectionPad1d, nn.ReflectionPad2d, nn.ReflectionPad3d), "reflect"),
    **dict.fromkeys((nn.ReplicationPad1d, nn.ReplicationPad2d, nn.ReplicationPad3d), "replicate"),
    **dict.fromkeys((nn.CircularPad1d, nn.CircularPad2d, nn.CircularPad3d), "circular"),
}
EDGE_MODES = ("reflect", "replicate", "circular")


@op("pad", F.pad, modules=(nn.ConstantPad1d, nn.ConstantPad2d, nn.ConstantPad3d, nn.ZeroPad1d, nn.ZeroPad2d,
                           nn.ZeroPad3d, *EDGE_PAD_MODULES))
def pad(ctx, *args, **kwargs):
    """Constant padding (negative amounts crop) as a guarded gather like the conv padding copy; reflect,
    replicate and circular padding as edge copies (``edge_pad``)."""
    if ctx.module is not None:
        m, x = args[0], args[1]
        mode = EDGE_PAD_MODULES.get(type(m), "constant")
        amounts, value = list(m.padding), getattr(m, "value", 0.0)
    else:
        x = args[0]
        amounts = list(kwargs.get("pad", args[1] if len(args) > 1 else ()))
        mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
        value = kwargs.get("value", args[3] if len(args) > 3 else None)
    before, after = pad_amounts(amounts, x.ndim)
    if mode in EDGE_MODES:
        return edge_pad(ctx, x, before, after, mode)
    if mode != "constant":
        raise UnsupportedOperatorError("pad", detail=f"mode={mode!r}",
                                       supported="mode='constant', 'reflect', 'replicate', 'circular'")
    value = 0.0 if value is None else value
    shape = ctx.shape

    def cond(vs):
        out = None
        for d, v in enumerate(vs):
            lo, n = before[d], x.shape[d]
            if lo > 0 or shape[d] - lo > n:
                out = E.land(out, E.chain(lo, "<=", v, "<", lo + n))
        return out

    def index(vs):
        return [E.isub(v, before[d]) for d, v in enumerate(vs)]

    needs_guard = any(before[d] > 0 or shape[d] - before[d] > x.shape[d] for d in range(x.ndim))
    return copy_block(ctx, shape, x.dtype, index, x, cond_fn=cond if needs_guard else None, other=value)


def pad_amounts(amounts, ndim: int) -> tuple[list[int], list[int]]:
    """F.pad's flat ``(last_lo, last_hi, prev_lo, prev_hi, ...)`` as per-dimension before/after lists."""
    before, after = [0] * ndim, [0] * ndim
    for k in range(len(amounts) // 2):
        before[ndim - 1 - k], after[ndim - 1 - k] = amounts[2 * k], amounts[2 * k + 1]
    return before, after


def edge_pad(ctx, x: Tensor, before, after, mode: str) -> Tensor:
    """Reflect/replicate/circular padding, one dimension at a time (last first, as PyTorch applies it)."""
    if min(before + after) < 0:
        raise UnsupportedOperatorError("pad", detail=f"negative amounts with mode={mode!r}",
                                       supported="negative amounts with mode='constant'")
    for dim in reversed(range(x.ndim)):
        if before[dim] or after[dim]:
            x = _edge_pad_dim(ctx, x, dim, before[dim], after[dim], mode)
    return x


def _edge_sources(mode: str, n: int, lo: int):
    """Source index of the low and the high border's ``v``-th element (all affine, always in bounds)."""
    if mode == "reflect":  # the edge element itself is not repeated
        return (lambda v: E.isub(lo, v)), (lambda v: E.isub(n - 2, v))
    if mode == "replicate":
        return (lambda v: E.ZERO), (lambda v: E.lit(n - 1))
    return (lambda v: E.iadd(v, n - lo)), (lambda v: v)  # circular: wrap around


def _edge_pad_dim(ctx, x: Tensor, dim: int, lo: int, hi: int, mode: str) -> Tensor:
    """Three copies into disjoint slabs of the result along ``dim``: the body, the low and the high border."""
    n = x.shape[dim]
    if mode != "replicate" and max(lo, hi) > (n - 1 if mode == "reflect" else n):
        raise UnsupportedOperatorError("pad", detail=f"mode={mode!r} by more than the dimension allows")
    shape = list(x.shape)
    shape[dim] = n + lo + hi
    out = ctx.em.fresh(tuple(shape), x.dtype)
    low, high = _edge_sources(mode, n, lo)

    def slab(extent: int, offset: int, source) -> None:
        slab_shape = list(x.shape)
        slab_shape[dim] = extent

        def body(*vs):
            dst, src = list(vs), list(vs)
            dst[dim], src[dim] = E.iadd(vs[dim], offset), source(vs[dim])
            return Assign(out.ref(*dst), x.ref(*src))

        ctx.em.block(tuple(slab_shape), body)

    slab(n, lo, lambda v: v)
    if lo:
        slab(lo, 0, low)
    if hi:
        slab(hi, lo + n, high)
    return out


@op("interpolate", F.interpolate, modules=(nn.Upsample,))
def interpolate(ctx, *args, **kwargs):
    """Resizing: ``nearest`` reads ``floor(i*in/out)``; ``linear``/``bilinear``/``trilinear`` blend the
    2^d neighbours, with source indices and weights (which depend on shapes only) as small constants;
    ``bicubic`` and ``antialias=True`` apply PyTorch's own per-dim weights (``sampling``)."""
    antialias, size = False, None
    if ctx.module is not None:
        m, x = args[0], args[1]
        mode, scale, align, size = m.mode, m.scale_factor, m.align_corners, m.size
        recompute = getattr(m, "recompute_scale_factor", None)
    else:
        x = args[0]
        names = ("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias")
        defaults = (None, None, "nearest", None, None, False)
        v = dict(zip(names, [kwargs.get(nm, args[i + 1] if i + 1 < len(args) else d)
                             for i, (nm, d) in enumerate(zip(names, defaults, strict=True))], strict=True))
        mode, scale, align = v["mode"], v["scale_factor"], v["align_corners"]
        recompute, antialias, size = v["recompute_scale_factor"], bool(v["antialias"]), v["size"]
    if mode == "bicubic" or (antialias and mode in ("bilinear", "bicubic")):
        from .sampling import interpolate_by_weights

        return interpolate_by_weights(ctx, x, size, scale, mode, align, recompute, antialias)
    shape = ctx.shape
    lead = 2
    n = x.ndim - lead
    scales = list(scale) if isinstance(scale, tuple | list) else [scale] * n
    if recompute:
        scales = [None] * n
    if mode == "nearest":
        return _nearest(ctx, x, shape, scales)
    if mode not in ("linear", "bilinear", "trilinear"):
        raise UnsupportedOperatorError("interpolate", detail=f"mode={mode!r}",
                                       supported="nearest, linear, bilinear, trilinear, bicubic")
    return _multilinear(ctx, x, shape, scales, bool(align))


def _nearest(ctx, x, shape, scales):
    lead = 2

    def index(vs):
        idx = list(vs[:lead])
        for j, v in enumerate(vs[lead:]):
            n_in, n_out = x.shape[lead + j], shape[lead + j]
            s = scales[j]
            if s is not None and float(s).is_integer() and n_out == n_in * int(s):
                idx.append(E.ifloordiv(v, int(s)))
            elif s is None and n_out % n_in == 0:
                idx.append(E.ifloordiv(v, n_out // n_in))
            elif s is None:
                idx.append(E.ifloordiv(E.imul(v, n_in), n_out))
            else:
                raise UnsupportedOperatorError("interpolate", detail=f"non-integer scale_factor {s}")
        return idx

    return copy_block(ctx, shape, x.dtype, index, x)


def _source_table(n_in: int, n_out: int, scale, align: bool, dtype: str):
    """PyTorch's linear source indices (i0, i1) and their weights (w0, w1) for each output position.

    Taken from PyTorch's own 1-D ``linear`` kernel run on one-hot inputs of ``dtype`` (the same per-dim
    helper its bilinear and trilinear kernels call): it computes the source coordinate in that dtype's
    arithmetic (float for f32, with the FMA its compiler contracted), and a weight computed in float64
    instead differs by up to ``u·|coordinate|`` — at coordinates in the hundreds, 100× a correct
    kernel's error bound (issue 45). Where a row has one nonzero weight, the other tap is the next index
    (PyTorch reads it with weight 0, so an inf there still makes a NaN) unless the sizes are equal (a
    copy) or the index is the last.
    """
    from .sampling import TORCH_FLOAT

    basis = torch.eye(n_in, dtype=TORCH_FLOAT[dtype]).reshape(n_in, 1, n_in)
    with torch.no_grad():
        if scale is None:
            result = F.interpolate(basis, size=n_out, mode="linear", align_corners=align)
        else:
            result = F.interpolate(basis, scale_factor=float(scale), mode="linear", align_corners=align)
    weights = result[:, 0, :].T.double().numpy()
    if weights.shape != (n_out, n_in):
        raise UnsupportedOperatorError("interpolate",
                                       detail=f"a resize of {n_in} to {n_out} with scale {scale}")
    i0 = np.zeros(n_out, dtype=np.int64)
    i1 = np.zeros(n_out, dtype=np.int64)
    w0 = np.zeros(n_out)
    w1 = np.zeros(n_out)
    for o, row in enumerate(weights):
        cols = np.flatnonzero(row)
        if cols.size == 0:
            continue
        i0[o] = cols[0]
        w0[o] = row[cols[0]]
        if cols.size > 1:
            i1[o], w1[o] = cols[1], row[cols[1]]
        else:
            i1[o] = cols[0] if n_in == n_out else min(cols[0] + 1, n_in - 1)
    return i0, i1, w0, w1


def _multilinear(ctx, x, shape, scales, align):
    import itertools

    lead = 2
    n = x.ndim - lead
    dtype = ctx.dtype
    np_dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype]
    tables = []
    for j in range(n):
        i0, i1, w0, w1 = _source_table(x.shape[lead + j], shape[lead + j], scales[j], align, dtype)
        key = ("interp", ctx.node.name, j)
        tables.append((
            ctx.em.add_known(key + ("i0",), i0, "i64", "const"),
            ctx.em.add_known(key + ("i1",), i1, "i64", "const"),
            ctx.em.add_known(key + ("w0",), w0.astype(np_dtype), dtype, "const"),
            ctx.em.add_known(key + ("w1",), w1.astype(np_dtype), dtype, "const"),
        ))
    out = ctx.em.fresh(shape, dtype)

    def body(*vs):
        total = None
        for corner in itertools.product((0, 1), repeat=n):
            idx = list(vs[:lead])
            weight = None
            for j, c in enumerate(corner):
                i_low, i_high, w_low, w_high = tables[j]
                o = vs[lead + j]
                idx.append((i_high if c else i_low).ref(o))
                w = (w_high if c else w_low).ref(o)
                weight = w if weight is None else E.mul(weight, w)
            term = E.mul(weight, x.ref(*idx))
            total = term if total is None else E.add(total, term)
        return Assign(out.ref(*vs), total)

    ctx.em.block(shape, body)
    return out


@op("embedding", F.embedding, modules=(nn.Embedding,))
def embedding(ctx, *args, **kwargs):
    """``out[..., d] = weight[index[...], d]``: a gather through a nested integer tensor reference."""
    if ctx.module is not None:
        m, index = args[0], args[1]
        if m.max_norm is not None:
            raise UnsupportedOperatorError("embedding", detail="max_norm (renormalises the table in place)")
        weight = ctx.known(m.weight)
    else:
        index, weight = args[0], kwargs.get("weight", args[1] if len(args) > 1 else None)
        if kwargs.get("max_norm") is not None:
            raise UnsupportedOperatorError("embedding", detail="max_norm")
    return copy_block(ctx, ctx.shape, weight.dtype, lambda vs: [index.ref(*vs[:-1]), vs[-1]], weight)


@op("gather", torch.gather, methods=("gather",))
def gather(ctx, x, dim, index, *, sparse_grad=False):
    dim %= x.ndim

    def idx(vs):
        out = list(vs)
        out[dim] = index.ref(*vs)
        return out

    return copy_block(ctx, index.shape, x.dtype, idx, x)


@op("take_along_dim", torch.take_along_dim, methods=("take_along_dim",))
def take_along_dim(ctx, x, indices, dim=None):
    """``gather`` with both operands broadcast against each other outside ``dim``."""
    if dim is None:
        raise UnsupportedOperatorError("take_along_dim", detail="without dim (over the flattened input)",
                                       supported="take_along_dim(x, indices, dim)")
    shape = ctx.shape
    dim %= len(shape)

    def index(vs):
        idx = [E.ZERO if x.shape[d] == 1 and shape[d] != 1 else v for d, v in enumerate(vs)]
        idx[dim] = ctx.em.bref(indices, vs, shape)
        return idx

    return copy_block(ctx, shape, x.dtype, index, x)


@op("index_select", torch.index_select, methods=("index_select",))
def index_select(ctx, x, dim, index):
    dim %= x.ndim

    def idx(vs):
        out = list(vs)
        out[dim] = index.ref(vs[dim]) if index.ndim else index.ref()
        return out

    return copy_block(ctx, ctx.shape, x.dtype, idx, x)


@op("repeat_interleave", torch.repeat_interleave, methods=("repeat_interleave",))
def repeat_interleave(ctx, x, repeats, dim=None, *, output_size=None):
    if not isinstance(repeats, int):
        raise UnsupportedOperatorError("repeat_interleave", detail="per-element repeat counts")
    if dim is None:
        flat = reshape_to(ctx, x, (x.numel,))
        return copy_block(ctx, ctx.shape, x.dtype, lambda vs: [E.ifloordiv(vs[0], repeats)], flat)
    dim %= x.ndim
    return copy_block(ctx, ctx.shape, x.dtype,
                      lambda vs: [E.ifloordiv(v, repeats) if k == dim else v for k, v in enumerate(vs)], x)


@op("one_hot", F.one_hot)
def one_hot(ctx, index, num_classes=-1):
    out = ctx.em.fresh(ctx.shape, ctx.dtype)
    ctx.em.block(ctx.shape, lambda *vs: Assign(out.ref(*vs),
                                               E.ite(E.cmp(index.ref(*vs[:-1]), "==", vs[-1]), 1, 0)))
    return out



@op("pixel_shuffle", F.pixel_shuffle, modules=(nn.PixelShuffle,))
def pixel_shuffle(ctx, *args):
    x, r = (args[1], args[0].upscale_factor) if ctx.module is not None else (args[0], args[1])

    def index(vs):
        *lead, c, h, w = vs
        channel = E.iadd(E.imul(c, r * r), E.iadd(E.imul(E.imod(h, r), r), E.imod(w, r)))
        return [*lead, channel, E.ifloordiv(h, r), E.ifloordiv(w, r)]

    return copy_block(ctx, ctx.shape, x.dtype, index, x)


@op("pixel_unshuffle", F.pixel_unshuffle, modules=(nn.PixelUnshuffle,))
def pixel_unshuffle(ctx, *args):
    x, r = (args[1], args[0].downscale_factor) if ctx.module is not None else (args[0], args[1])

    def index(vs):
        *lead, c, h, w = vs
        sub = E.imod(c, r * r)
        return [*lead, E.ifloordiv(c, r * r), E.iadd(E.imul(h, r), E.ifloordiv(sub, r)),
                E.iadd(E.imul(w, r), E.imod(sub, r))]

    return copy_block(ctx, ctx.shape, x.dtype, index, x)


@op("channel_shuffle", F.channel_shuffle, torch.channel_shuffle, modules=(nn.ChannelShuffle,))
def channel_shuffle(ctx, *args):
    """Output channel ``c`` reads input channel ``(c % g) * (C / g) + c // g`` (view, transpose, flatten)."""
    x, g = (args[1], args[0].groups) if ctx.module is not None else (args[0], args[1])
    per_group = x.shape[1] // g

    def index(vs):
        c = vs[1]
        return [vs[0], E.iadd(E.imul(E.imod(c, g), per_group), E.ifloordiv(c, g)), *vs[2:]]

    return copy_block(ctx, ctx.shape, x.dtype, index, x)


@op("rot90", torch.rot90, methods=("rot90",))
def rot90(ctx, x, k=1, dims=(0, 1)):
    """A quarter turn ``k`` times from ``dims[0]`` towards ``dims[1]``: flips and a swap of the two dims."""
    d0, d1 = (d % x.ndim for d in dims)
    n0, n1 = x.shape[d0], x.shape[d1]
    k %= 4

    def index(vs):
        src = list(vs)
        if k == 1:  # x.flip(d1).transpose(d0, d1)
            src[d0], src[d1] = vs[d1], E.isub(n1 - 1, vs[d0])
        elif k == 2:
            src[d0], src[d1] = E.isub(n0 - 1, vs[d0]), E.isub(n1 - 1, vs[d1])
        elif k == 3:  # x.flip(d0).transpose(d0, d1)
            src[d0], src[d1] = E.isub(n0 - 1, vs[d1]), vs[d0]
        return src

    return copy_block(ctx, ctx.shape, x.dtype, index, x)


@op("diff", torch.diff, methods=("diff",))
def diff(ctx, x, n=1, dim=-1, prepend=None, append=None):
    """``x[i+1] - x[i]`` along ``dim``, ``n`` times (``prepend``/``append`` joined first, as PyTorch)."""
    if x.dtype == "bool":
        raise UnsupportedOperatorError("diff", detail="of a bool tensor (a logical xor)")
    dim %= x.ndim
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        if not all(isinstance(t, Tensor) and t.ndim == x.ndim for t in parts):
            raise UnsupportedOperatorError("diff", detail="prepend/append that are not tensors of x's rank")
        shape = list(x.shape)
        shape[dim] = sum(t.shape[dim] for t in parts)
        x = _join(ctx, parts, dim, tuple(shape), x.dtype)
    for _ in range(n):
        shape = list(x.shape)
        shape[dim] -= 1

        def body(*vs, src=x):
            nxt = list(vs)
            nxt[dim] = E.iadd(vs[dim], 1)
            return E.sub(src.ref(*nxt), src.ref(*vs))

        out = ctx.em.fresh(tuple(shape), x.dtype)
        ctx.em.block(tuple(shape), lambda *vs, out=out, body=body: Assign(out.ref(*vs), body(*vs)))
        x = out
    return x


def _join(ctx, parts, dim: int, shape, dtype) -> Tensor:
    """``torch.cat(parts, dim)`` into a fresh tensor (the blocks ``cat`` writes)."""
    out = ctx.em.fresh(shape, dtype)
    offset = 0
    for t in parts:
        def body(*vs, t=t, offset=offset):
            idx = list(vs)
            idx[dim] = E.iadd(vs[dim], offset)
            return Assign(out.ref(*idx), t.ref(*vs))

        ctx.em.block(t.shape, body)
        offset += t.shape[dim]
    return out


@op("kron", torch.kron, methods=("kron",))
def kron(ctx, a, b):
    """``out[i*B + j] = a[i] * b[j]`` in every dim (the shorter operand gets leading 1s)."""
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)

    def body(*vs):
        ia = [E.ifloordiv(v, sb[d]) for d, v in enumerate(vs)][nd - a.ndim:]
        ib = [E.imod(v, sb[d]) if sb[d] > 1 else E.ZERO for d, v in enumerate(vs)][nd - b.ndim:]
        return E.mul(a.ref(*ia), b.ref(*ib))

    if tuple(ctx.shape) != tuple(s * t for s, t in zip(sa, sb, strict=True)):
        raise UnsupportedOperatorError("kron", detail=f"shapes {a.shape} and {b.shape}")
    out = ctx.em.fresh(ctx.shape, ctx.dtype)
    ctx.em.block(ctx.shape, lambda *vs: Assign(out.ref(*vs), body(*vs)))
    return out


@op("diag_embed", torch.diag_embed, methods=("diag_embed",))
def diag_embed(ctx, x, offset=0, dim1=-2, dim2=-1):
    """The last dim of ``x`` on the (shifted) diagonal of two new trailing dims, zeros elsewhere."""
    if (dim1 % len(ctx.shape), dim2 % len(ctx.shape)) != (x.ndim - 1, x.ndim):
        raise UnsupportedOperatorError("diag_embed", detail="into other than the two last dims")
    out = ctx.em.fill(ctx.shape, x.dtype, 0)
    lead = x.ndim - 1

    def body(*vs):
        i = vs[-1]
        row, col = (i, E.iadd(i, offset)) if offset >= 0 else (E.iadd(i, -offset), i)
        return Assign(out.ref(*vs[:lead], row, col), x.ref(*vs))

    ctx.em.block(x.shape, body)
    return out
