"""Writes at data-dependent positions, as dense formulations: scatter, index_add/copy/fill/reduce,
index_put, masked_scatter, the ``*_scatter`` views and item assignment (``x[:, 0] = y``, ``x[idx] = v``,
``out[mask] = 0``).

A write ``out[target(s)] ⊕= value(s)`` over source positions ``s`` becomes, for every output element
``o``, a reduction over ``s`` of ``value(s)`` where ``target(s) == o`` (identity elsewhere): LEIR has no
store through a computed subscript, but a comparison in the reduced value is a reduction it has. PyTorch's
duplicate-index rules follow from the combiner: accumulating writes (``index_add``, ``scatter_add``,
``index_put(accumulate=True)``, ``scatter_reduce``) combine every duplicate; plain writes (``scatter``,
``index_copy``, ``index_put``, item assignment) keep the *last* source position in row-major order — what
PyTorch's CPU kernels do and what its docs leave undefined — found as the largest matching flat source
position and read back through a gather. Cost: one pass over (output positions × source positions) per
write, against PyTorch's one pass over the source.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from leir.ast import Assign, Expr, Var, walk_expr
from leir.dtypes import numel

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op

#: scatter_reduce / index_reduce names → (combiner, identity). ``mean`` sums and counts.
REDUCTIONS = {"sum": ("+", 0), "prod": ("*", 1), "mean": ("+", 0), "amax": ("max", -np.inf),
              "amin": ("min", np.inf)}
#: The legacy ``scatter(..., reduce=)`` spellings.
LEGACY_REDUCE = {"add": "sum", "multiply": "prod"}


@dataclass
class Write:
    """One data-dependent write into ``base``.

    ``targeted`` are the output dims a source position chooses; the other output dims are free (the
    source and the output share them). ``cover`` bounds each output dim to the part the writes reach (a
    scatter's index may be smaller than the output outside ``dim``). ``source`` are the extents of the
    source positions; ``target(o, s)`` gives, per targeted dim, the output subscript source position ``s``
    writes (``o`` = output loop variables, only the free ones meaningful); ``value(o, s)`` its value.
    """

    base: Tensor
    targeted: Sequence[int]
    source: Sequence[int]
    target: Callable[[list, list], list[Expr]]
    value: Callable[[list, list], Expr]
    cover: Sequence[int] | None = None
    #: The output elements a write may reach at all (a sliced item assignment), or ``None`` for all.
    region: Callable[[list], object] | None = None

    def reach(self) -> list[int]:
        return list(self.cover) if self.cover is not None else list(self.base.shape)

    def hits(self, o, s):
        cond = self.region(o) if self.region is not None else None
        for d, t in zip(self.targeted, self.target(o, s), strict=True):
            cond = E.land(cond, E.cmp(t, "==", o[d]))
        return cond


def _normalised(index: Expr, size: int) -> Expr:
    """A possibly negative index as PyTorch reads it (``-1`` is the last element)."""
    return E.ite(E.cmp(index, "<", 0), E.iadd(index, size), index)


def _covered(write: Write, o) -> object | None:
    """Where the output can have been written: inside the cover and the region."""
    cond = write.region(o) if write.region is not None else None
    for d, (reach, size) in enumerate(zip(write.reach(), write.base.shape, strict=True)):
        if reach < size:
            cond = E.land(cond, E.cmp(o[d], "<", reach))
    return cond


def _flat(vs, shape) -> Expr:
    """Row-major flat position of subscripts ``vs`` in ``shape``."""
    out: Expr = E.ZERO
    for v, size in zip(vs, shape, strict=True):
        out = E.iadd(E.imul(out, size), v)
    return out


def unflatten(flat: Expr, shape) -> list[Expr]:
    """Subscripts of row-major flat position ``flat`` in ``shape`` (the inverse of ``_flat``)."""
    out, stride = [], 1
    for size in reversed(shape):
        part = E.ifloordiv(flat, stride) if stride > 1 else flat
        out.append(E.imod(part, size) if size != 1 else E.ZERO)
        stride *= size
    out.reverse()
    if shape:
        stride //= shape[0]
        out[0] = E.ifloordiv(flat, stride) if stride > 1 else flat
    return out


def _loops_of(write: Write):
    """Extents of the reduction nest: the reached output dims, then the source positions (innermost)."""
    return [*write.reach(), *write.source]


def accumulate(ctx, write: Write, reduce: str, include_self: bool, dtype: str, alpha=1) -> Tensor:
    """Every write combined with ``reduce`` (``sum prod mean amax amin``) into ``base``."""
    combiner, identity = REDUCTIONS[reduce]
    base, n = write.base, write.base.ndim
    acc = ctx.em.fresh(write.reach(), dtype)
    count = ctx.em.fresh(write.reach(), "i64") if (reduce == "mean" or not include_self) else None

    def body(*vs):
        o, s = list(vs[:n]), list(vs[n:])
        hit = write.hits(o, s)
        lhs = acc.ref(*o)
        items = [Assign(lhs, _combine(combiner, lhs, E.ite(hit, write.value(o, s), identity)))]
        if count is not None:
            items.append(Assign(count.ref(*o), E.add(count.ref(*o), E.ite(hit, 1, 0))))
        return items

    ctx.em.block(_loops_of(write), body)
    out = ctx.em.fresh(base.shape, dtype)

    def final(*o):
        o = list(o)
        old, got = base.ref(*o), acc.ref(*o)
        seen = E.cmp(count.ref(*o), ">", 0) if count is not None else None
        if reduce == "mean":
            value = (E.div(E.add(old, got), E.add(count.ref(*o), 1)) if include_self
                     else E.ite(seen, E.div(got, count.ref(*o)), old))
        elif include_self:
            if combiner == "+":
                value = E.add(old, got if alpha == 1 else E.mul(got, alpha))
            else:
                value = _combine(combiner, old, got)
        else:
            value = E.ite(seen, got, old)
        covered = _covered(write, o)
        return Assign(out.ref(*o), value if covered is None else E.ite(covered, value, old))

    ctx.em.block(base.shape, final)
    return out


def _combine(combiner: str, acc, value):
    from ..emit import combine

    return combine(combiner, acc, value)


def last_write(ctx, write: Write, dtype: str) -> Tensor:
    """Plain writes: the last source position (row-major) that writes an element wins.

    Where source positions with different values hit one element, PyTorch's CPU kernels keep whichever
    thread wrote last (two runs can differ); such a write is recorded on the emitter
    (``order_dependent``) and the translation says so. One value for every position (``x[idx] = 0``,
    ``index_fill``) is the same whichever write wins.
    """
    base, n = write.base, write.base.ndim
    winner = ctx.em.fresh(write.reach(), "i64")
    written = ctx.em.fresh(write.reach(), "i64")

    def body(*vs):
        o, s = list(vs[:n]), list(vs[n:])
        source_vars = {v.name for v in s if isinstance(v, Var)}
        if source_vars & {v.name for v in walk_expr(write.value(o, s)) if isinstance(v, Var)}:
            ctx.em.order_dependent.append(ctx.node)
        hit = write.hits(o, s)
        at, seen = winner.ref(*o), written.ref(*o)
        # the winner stays a valid position (0) where nothing writes, so the gather below is in bounds
        return [Assign(at, E.maximum(at, E.ite(hit, _flat(s, write.source), 0))),
                Assign(seen, E.maximum(seen, E.ite(hit, 1, 0)))]

    ctx.em.block(_loops_of(write), body)
    out = ctx.em.fresh(base.shape, dtype)

    def final(*o):
        o = list(o)
        s = unflatten(winner.ref(*o), write.source)
        cond = E.land(_covered(write, o), E.cmp(written.ref(*o), ">", 0))
        return Assign(out.ref(*o), E.ite(cond, write.value(o, s), base.ref(*o)))

    ctx.em.block(base.shape, final)
    return out


def apply(ctx, write: Write, reduce: str | None, include_self: bool = True, alpha=1) -> Tensor:
    dtype = write.base.dtype
    if reduce is None:
        return last_write(ctx, write, dtype)
    return accumulate(ctx, write, reduce, include_self, dtype, alpha)


def _value_of(src, shape_vars_fn):
    """``value(o, s)``: tensor ``src`` at ``shape_vars_fn(o, s)`` (a 0-d one everywhere), or a literal."""
    if isinstance(src, Tensor) and src.ndim == 0:
        return lambda o, s: src.ref()
    if isinstance(src, Tensor):
        return lambda o, s: src.ref(*shape_vars_fn(o, s))
    return lambda o, s: E.lit(src)


# -------------------------------------------------------------------------------------------- scatter


def _along_dim(x: Tensor, dim: int, index: Tensor, src) -> Write:
    """scatter's write: source position ``s`` = an index position; it writes ``index[s]`` along ``dim``."""
    dim %= max(x.ndim, 1)
    if index.ndim == 0:
        return _along_dim(x, dim, _unit(index), src)

    def at(o, s):
        return [*o[:dim], s[0], *o[dim + 1:]]

    value = _value_of(src, at)
    cover = [index.shape[d] if d != dim else x.shape[d] for d in range(x.ndim)]
    return Write(x, [dim], [index.shape[dim]], lambda o, s: [index.ref(*at(o, s))], value, cover)


class _Unit:
    """A 0-d index read as a 1-element one (``index_add(0, tensor(2), ...)``)."""

    def __init__(self, t: Tensor) -> None:
        self.t, self.shape, self.ndim = t, (1,), 1

    def ref(self, *_):
        return self.t.ref()


def _unit(t: Tensor):
    return _Unit(t)


@op("scatter", torch.scatter, methods=("scatter", "scatter_"))
def scatter(ctx, x, dim, index, src=None, *, value=None, reduce=None):
    source = src if src is not None else value
    mode = LEGACY_REDUCE.get(reduce, reduce) if reduce is not None else None
    return apply(ctx, _along_dim(x, dim, index, source), mode)


@op("scatter_add", torch.scatter_add, methods=("scatter_add", "scatter_add_"))
def scatter_add(ctx, x, dim, index, src):
    return apply(ctx, _along_dim(x, dim, index, src), "sum")


@op("scatter_reduce", torch.scatter_reduce, methods=("scatter_reduce", "scatter_reduce_"))
def scatter_reduce(ctx, x, dim, index, src, reduce, *, include_self=True):
    if reduce not in REDUCTIONS:
        raise UnsupportedOperatorError("scatter_reduce", detail=f"reduce={reduce!r}",
                                       supported=", ".join(REDUCTIONS))
    return apply(ctx, _along_dim(x, dim, index, src), reduce, include_self)


# ---------------------------------------------------------------------------------------- index_*


def _along_index(x: Tensor, dim: int, index: Tensor, source) -> Write:
    """index_add/copy/fill/reduce: source slice ``j`` goes to ``index[j]`` along ``dim``."""
    dim %= max(x.ndim, 1)
    n = index.shape[0] if index.ndim else 1
    size = x.shape[dim] if x.ndim else 1

    def at(o, s):
        if not isinstance(source, Tensor) or source.ndim < x.ndim:  # a 0-d index drops the dim
            return [*o[:dim], *o[dim + 1:]] if isinstance(source, Tensor) else []
        return [*o[:dim], s[0], *o[dim + 1:]]

    def target(o, s):
        return [_normalised(index.ref(s[0]) if index.ndim else index.ref(), size)]

    value = _value_of(source, at)
    return Write(x, [dim], [n], target, value)


@op("index_add", torch.index_add, methods=("index_add", "index_add_"))
def index_add(ctx, x, dim, index, source, *, alpha=1):
    return apply(ctx, _along_index(x, dim, index, source), "sum", alpha=alpha)


@op("index_copy", torch.index_copy, methods=("index_copy", "index_copy_"))
def index_copy(ctx, x, dim, index, source):
    return apply(ctx, _along_index(x, dim, index, source), None)


@op("index_fill", torch.index_fill, methods=("index_fill", "index_fill_"))
def index_fill(ctx, x, dim, index, value):
    return apply(ctx, _along_index(x, dim, index, value), None)


@op("index_reduce", torch.index_reduce, methods=("index_reduce", "index_reduce_"))
def index_reduce(ctx, x, dim, index, source, reduce, *, include_self=True):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise UnsupportedOperatorError("index_reduce", detail=f"reduce={reduce!r}",
                                       supported="prod, mean, amax, amin")
    return apply(ctx, _along_index(x, dim, index, source), reduce, include_self)


# ------------------------------------------------------------------------------ advanced-index writes


def _key_items(x: Tensor, key) -> list:
    """The key as one item per indexing position: slices for ``...`` and the unnamed trailing dims."""
    items = list(key) if isinstance(key, tuple | list) and not _is_index_list(key) else [key]
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, slice | int | Tensor)):
            raise UnsupportedOperatorError("setitem", detail=f"indexing with {type(item).__name__}")
    bools = [it for it in items if isinstance(it, Tensor) and it.dtype == "bool"]
    consuming = sum(it.ndim if isinstance(it, Tensor) and it.dtype == "bool" else 1
                    for it in items if it is not None and it is not Ellipsis)
    fill = [slice(None)] * (x.ndim - consuming)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = fill
    else:
        items += fill
    if bools and (len(bools) > 1 or bools[0].ndim == 0):
        raise UnsupportedOperatorError("setitem", detail="several (or 0-d) boolean masks in one index")
    return items


def _is_index_list(key) -> bool:
    return isinstance(key, list) and all(isinstance(k, int) for k in key)


def _view_shape(x: Tensor, items) -> tuple[int, ...]:
    """The shape ``x[items]`` has, by asking PyTorch on a storage-less tensor."""
    meta_items = tuple(torch.zeros(it.shape, dtype=torch.int64, device="meta") if isinstance(it, Tensor)
                       else it for it in items)
    return tuple(torch.empty(x.shape, device="meta")[meta_items].shape)


def index_write(ctx, x: Tensor, items: list, value, accumulate: bool) -> Tensor:
    """``x[items] = value`` (or ``+=`` when ``accumulate``) for ints, slices, ``None`` and integer tensors.

    Output dims indexed by a slice or ``:`` are free (restricted to the slice); ints and integer tensors
    choose the output position; the value is broadcast to the shape ``x[items]`` has, whose dims follow
    PyTorch's placement rule for advanced indices (at the first one when they are adjacent, else first).
    """
    view = _view_shape(x, items)
    adv = [k for k, it in enumerate(items) if isinstance(it, Tensor)]
    adv_shape = tuple(torch.broadcast_shapes(*[items[k].shape for k in adv])) if adv else ()
    dims, d = [], 0  # the output dim of each item (None for None)
    for it in items:
        dims.append(None if it is None else d)
        d += 0 if it is None else 1
    positions = [k for k, it in enumerate(items) if isinstance(it, Tensor | int)]
    adjacent = bool(adv) and positions == list(range(positions[0], positions[-1] + 1))
    # the view's dims, in order: ("b", item) for a slice or None, ("a", j) for advanced dim j
    order: list = []
    advanced = [("a", j) for j in range(len(adv_shape))]
    basic = [k for k, it in enumerate(items) if it is None or isinstance(it, slice)]
    if adv and adjacent:
        order = ([("b", k) for k in basic if k < positions[0]] + advanced
                 + [("b", k) for k in basic if k > positions[0]])
    elif adv:
        order = advanced + [("b", k) for k in basic]
    else:
        order = [("b", k) for k in basic]
    assert len(order) == len(view), (order, view)
    targeted = [dims[k] for k in positions]
    slices = {k: it.indices(x.shape[dims[k]]) for k, it in enumerate(items) if isinstance(it, slice)}

    def view_coords(o, s):
        coords = []
        for kind, k in order:
            if kind == "a":
                coords.append(s[k])
            elif items[k] is None:
                coords.append(E.ZERO)
            else:
                start, _, step = slices[k]
                coords.append(E.ifloordiv(E.isub(o[dims[k]], start), step))
        return coords

    def value_fn(o, s):
        return ctx.em.bref(value, view_coords(o, s), view) if isinstance(value, Tensor) else E.lit(value)

    def target(o, s):
        out = []
        for k in positions:
            it, size = items[k], x.shape[dims[k]]
            if isinstance(it, int):
                out.append(E.lit(it % size))
            else:
                out.append(_normalised(ctx.em.bref(it, s, adv_shape), size))
        return out

    region = _slice_region(slices, dims) if slices else None
    write = Write(x, targeted, list(adv_shape), target, value_fn, region=region)
    if not adv and not accumulate:
        return _basic_write(ctx, x, write)
    return apply(ctx, write, "sum" if accumulate else None)


def _slice_region(slices, dims):
    """``o`` inside every sliced range (``start <= o < stop`` and on the step)."""

    def region(o):
        cond = None
        for k, (start, stop, step) in slices.items():
            v = o[dims[k]]
            if step != 1:
                cond = E.land(cond, E.cmp(E.imod(E.isub(v, start), step), "==", 0))
            cond = E.land(cond, E.chain(start, "<=", v, "<", max(stop, start)))
        return cond

    return region


def _basic_write(ctx, x: Tensor, write: Write) -> Tensor:
    """Ints and slices only: one elementwise block, the value inside the region, ``x`` elsewhere."""
    out = ctx.em.fresh(x.shape, x.dtype)

    def body(*o):
        o = list(o)
        cond = write.hits(o, [])
        value = write.value(o, [])
        return Assign(out.ref(*o), value if cond is None else E.ite(cond, value, x.ref(*o)))

    ctx.em.block(x.shape, body)
    return out


def mask_write(ctx, x: Tensor, items: list, value) -> Tensor:
    """``x[mask] = v`` with one value for every selected element (``out[mask] = 0``)."""
    k = next(i for i, it in enumerate(items) if isinstance(it, Tensor))
    mask = items[k]
    if any(not (isinstance(it, slice) and it == slice(None)) for i, it in enumerate(items) if i != k):
        raise UnsupportedOperatorError("setitem", detail="a boolean mask combined with other indices")
    trailing = tuple(x.shape[k + mask.ndim:])
    if isinstance(value, Tensor) and value.numel != 1 and not _broadcasts(value.shape, trailing):
        raise UnsupportedOperatorError(
            "setitem", detail="one value per selected element: their number depends on the mask's values",
            supported="a value broadcast to every selected element (out[mask] = 0, out[mask] = row)")
    lead = k  # every item before the mask is a full slice, one dim each

    def body(*o):
        o = list(o)
        cond = mask.ref(*o[lead:lead + mask.ndim])
        if mask.dtype != "bool":
            cond = E.cmp(cond, "!=", 0)
        if isinstance(value, Tensor):
            trailing_vars = o[lead + mask.ndim:]
            v = value.ref(*[E.ZERO] * value.ndim) if value.numel == 1 else ctx.em.bref(
                value, trailing_vars, x.shape[lead + mask.ndim:])
        else:
            v = E.lit(value)
        return Assign(out.ref(*o), E.ite(cond, v, x.ref(*o)))

    out = ctx.em.fresh(x.shape, x.dtype)
    ctx.em.block(x.shape, body)
    return out


def _broadcasts(shape, to) -> bool:
    if len(shape) > len(to):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(to), strict=False))


def setitem(ctx, x, key, value) -> Tensor:
    """The new value of ``x`` after ``x[key] = value`` (the translator rebinds ``x`` to it)."""
    if not isinstance(x, Tensor):
        raise UnsupportedOperatorError("setitem", detail="assignment into a non-tensor")
    items = _key_items(x, key)
    if any(isinstance(it, Tensor) and it.dtype == "bool" for it in items):
        return mask_write(ctx, x, items, value)
    return index_write(ctx, x, items, value, accumulate=False)


@op("index_put", torch.index_put, methods=("index_put", "index_put_"))
def index_put(ctx, x, indices, values, accumulate=False):
    items = list(indices)
    if any(isinstance(it, Tensor) and it.dtype == "bool" for it in items):
        if accumulate:
            raise UnsupportedOperatorError("index_put", detail="accumulate=True with a boolean mask")
        return mask_write(ctx, x, _key_items(x, tuple(items)), values)
    items = [slice(None) if it is None else it for it in items]
    return index_write(ctx, x, _key_items(x, tuple(items)), values, accumulate=bool(accumulate))


# ------------------------------------------------------------------------------------ masked_scatter


@op("masked_scatter", torch.masked_scatter, methods=("masked_scatter", "masked_scatter_"))
def masked_scatter(ctx, x, mask, source):
    """``out[p] = source.flatten()[rank(p)]`` where ``mask[p]``: the rank (selected elements before ``p``
    in row-major order) is an exclusive prefix count over the broadcast, flattened mask."""
    shape = ctx.shape
    total = numel(shape)
    flags = ctx.em.fresh((total,), "i64")

    def flag(f):
        o = unflatten(f, shape)
        m = ctx.em.bref(mask, o, shape)
        return Assign(flags.ref(f), E.ite(m if mask.dtype == "bool" else E.cmp(m, "!=", 0), 1, 0))

    ctx.em.block((total,), flag)
    rank = ctx.em.fresh((total,), "i64")

    def count(f):
        previous = E.add(rank.ref(E.isub(f, 1)), flags.ref(E.isub(f, 1)))
        return Assign(rank.ref(f), E.ite(E.cmp(E.isub(f, 1), "<", 0), 0, previous))

    ctx.em.block((total,), count, bind=False)
    out = ctx.em.fresh(shape, x.dtype)

    def body(*o):
        o = list(o)
        m = ctx.em.bref(mask, o, shape)
        src = source.ref(*unflatten(rank.ref(_flat(o, shape)), source.shape))
        return Assign(out.ref(*o), E.ite(m if mask.dtype == "bool" else E.cmp(m, "!=", 0), src,
                                         ctx.em.bref(x, o, shape)))

    ctx.em.block(shape, body)
    return out


# --------------------------------------------------------------------------------- *_scatter (views)


@op("slice_scatter", torch.slice_scatter, methods=("slice_scatter",))
def slice_scatter(ctx, x, src, dim=0, start=None, end=None, step=1):
    items = [slice(None)] * x.ndim
    items[dim % x.ndim] = slice(start, end, step)
    return index_write(ctx, x, items, src, accumulate=False)


@op("select_scatter", torch.select_scatter, methods=("select_scatter",))
def select_scatter(ctx, x, src, dim, index):
    items: list = [slice(None)] * x.ndim
    items[dim % x.ndim] = index
    return index_write(ctx, x, items, src, accumulate=False)


SETITEM = operator.setitem

__all__ = ["setitem", "SETITEM", "Write", "apply", "unflatten"]
