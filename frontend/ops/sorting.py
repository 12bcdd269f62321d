"""Sorting and order statistics as a rank formulation: sort, argsort, msort, topk, kthvalue, median.

LEIR has no data-dependent permutation, but it has reductions: the rank of element ``i`` along ``dim`` is
the number of elements that come before it, ``#{j: x[j] < x[i]} + #{j < i: x[j] == x[i]}`` (``>`` for a
descending order); the element at sorted position ``k`` is the one whose rank is ``k``, found by a second
reduction over ``i`` and read through a gather. Equal values keep their input order: PyTorch's
``stable=True`` order, which is also the order of any input without ties. (For ``stable=False``, topk and
kthvalue PyTorch leaves the order of equal values unspecified and its CPU kernels differ between sizes;
the values agree either way.) Cost: two passes of ``n`` comparisons per element along ``dim`` (O(n²) per
row, against PyTorch's O(n log n)); fine at the suite's sizes, quadratic at long rows. NaN is not ordered
(PyTorch sorts it last).
"""

from __future__ import annotations

from collections import namedtuple

import torch

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..registry import op
from .shape import ValuesIndices, reshape_to

Sorted = namedtuple("Sorted", ["values", "indices"])


def rank(ctx, x: Tensor, dim: int, descending: bool) -> Tensor:
    """``R[o]``: how many elements of ``o``'s row along ``dim`` precede it in the (stable) order."""
    out = ctx.em.fresh(x.shape, "i64")
    ahead = ">" if descending else "<"

    def body(*vs):
        o, j = list(vs[:-1]), vs[-1]
        other = list(o)
        other[dim] = j
        a, b = x.ref(*other), x.ref(*o)
        first = E.lor(E.cmp(a, ahead, b), E.land(E.cmp(a, "==", b), E.cmp(j, "<", o[dim])))
        lhs = out.ref(*o)
        return Assign(lhs, E.add(lhs, E.ite(first, 1, 0)))

    ctx.em.block([*x.shape, x.shape[dim]], body)
    return out


def positions(ctx, ranks: Tensor, dim: int, wanted, keep_dim: bool = True) -> Tensor:
    """Input index of the element at each sorted position in ``wanted`` (a count ``K`` for 0..K-1, or
    one position ``p`` for a reduced dim)."""
    n = ranks.shape[dim]
    single = not isinstance(wanted, range)
    extent = 1 if single else len(wanted)
    shape = list(ranks.shape)
    shape[dim] = extent
    kept = not single or keep_dim
    out_shape = tuple(shape) if kept else tuple(s for d, s in enumerate(shape) if d != dim)
    out = ctx.em.fresh(out_shape, "i64")

    def body(*vs):
        o, i = list(vs[:-1]), vs[-1]
        at = list(o)
        at[dim] = i
        k = E.lit(wanted) if single else o[dim]
        lhs_idx = list(o) if (not single or keep_dim) else [v for d, v in enumerate(o) if d != dim]
        if single and keep_dim:
            lhs_idx[dim] = E.ZERO
        lhs = out.ref(*lhs_idx)
        return Assign(lhs, E.add(lhs, E.ite(E.cmp(ranks.ref(*at), "==", k), i, 0)))

    ctx.em.block([*shape, n], body)
    return out


def take(ctx, x: Tensor, index: Tensor, dim: int, keep_dim: bool = True) -> Tensor:
    """``x`` read at ``index`` along ``dim`` (a reduced ``dim`` when ``index`` lacks it)."""
    out = ctx.em.fresh(index.shape, x.dtype)

    def body(*vs):
        idx = list(vs)
        if keep_dim:
            idx[dim] = index.ref(*vs)
        else:
            idx.insert(dim, index.ref(*vs))
        return Assign(out.ref(*vs), x.ref(*idx))

    ctx.em.block(index.shape, body)
    return out


def _as_row(ctx, x: Tensor, dim):
    """The tensor and dim a sort runs over: a 0-d tensor is one element; ``dim=None`` the flattened one."""
    if x.ndim == 0:
        return reshape_to(ctx, x, (1,)), 0
    if dim is None:
        return reshape_to(ctx, x, (x.numel,)), 0
    return x, dim % x.ndim


def sorted_prefix(ctx, x: Tensor, dim, count: int, descending: bool):
    x, dim = _as_row(ctx, x, dim)
    index = positions(ctx, rank(ctx, x, dim, descending), dim, range(count))
    return take(ctx, x, index, dim), index


def _unrow(ctx, pair, shape):
    """Back to the 0-d shape of a 0-d input."""
    if shape == ():
        return tuple(reshape_to(ctx, t, ()) for t in pair)
    return pair


@op("sort", torch.sort, methods=("sort",))
def sort(ctx, x, dim=-1, descending=False, *, stable=False):
    values, index = sorted_prefix(ctx, x, dim, x.shape[dim] if x.ndim else 1, bool(descending))
    return Sorted(*_unrow(ctx, (values, index), x.shape))


@op("argsort", torch.argsort, methods=("argsort",))
def argsort(ctx, x, dim=-1, descending=False, *, stable=False):
    return sort(ctx, x, dim, descending).indices


@op("msort", torch.msort, methods=("msort",))
def msort(ctx, x):
    return sort(ctx, x, 0).values


@op("topk", torch.topk, methods=("topk",))
def topk(ctx, x, k, dim=-1, largest=True, sorted=True):
    values, index = sorted_prefix(ctx, x, dim, int(k), bool(largest))
    return ValuesIndices(*_unrow(ctx, (values, index), x.shape))


def order_statistic(ctx, x: Tensor, dim, position_of, keepdim: bool):
    """The element at one ascending position (``position_of(n)``) along ``dim``, and its index."""
    flat = dim is None
    x, dim = _as_row(ctx, x, dim)
    at = position_of(x.shape[dim])
    index = positions(ctx, rank(ctx, x, dim, False), dim, at, keep_dim=keepdim and not flat)
    values = take(ctx, x, index, dim, keep_dim=keepdim and not flat)
    return values, index


@op("kthvalue", torch.kthvalue, methods=("kthvalue",))
def kthvalue(ctx, x, k, dim=-1, keepdim=False):
    values, index = order_statistic(ctx, x, dim if x.ndim else None, lambda n: int(k) - 1,
                                    keepdim and x.ndim > 0)
    return ValuesIndices(values, index)


@op("median", torch.median, methods=("median",))
def median(ctx, x, dim=None, keepdim=False):
    """The lower median (position ``(n-1)//2``), as PyTorch defines it; ``dim=None`` gives the value only."""
    values, index = order_statistic(ctx, x, dim if x.ndim else None, lambda n: (n - 1) // 2,
                                    keepdim and x.ndim > 0)
    if dim is None:
        return values
    return ValuesIndices(values, index)
