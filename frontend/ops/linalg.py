"""Contractions: linear, matmul/mm/bmm (with batch broadcasting), einsum, addmm/baddbmm/addbmm, bilinear.

All are one reduction block ``C=C+A*B`` over the output dimensions then the contracted ones (the
public data's matmul form); a bias or ``beta*input`` term is a second, accumulating block.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F
from torch import nn

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op


def contract(ctx, out_shape, red_extents, value_fn, dtype=None, out=None) -> Tensor:
    """``out[v] += value_fn(v, r)`` over output loops ``v`` then reduction loops ``r``."""
    out_shape = tuple(out_shape)
    out = out or ctx.em.fresh(out_shape, dtype or ctx.dtype)
    n = len(out_shape)
    if not red_extents:
        ctx.em.block(out_shape, lambda *vs: Assign(out.ref(*vs), value_fn(list(vs), [])))
        return out

    def body(*vs):
        lhs = out.ref(*vs[:n])
        return Assign(lhs, E.add(lhs, value_fn(list(vs[:n]), list(vs[n:]))))

    ctx.em.block(out_shape + tuple(red_extents), body)
    return out


def _batch_index(t: Tensor, batch_vars, out_batch_shape, tail):
    """Subscripts of ``t`` whose leading dims broadcast against the output's batch dims."""
    nb = t.ndim - len(tail)
    offset = len(out_batch_shape) - nb
    idx = []
    for j in range(nb):
        size = t.shape[j]
        idx.append(E.ZERO if size == 1 and out_batch_shape[j + offset] != 1 else batch_vars[j + offset])
    return idx + list(tail)


def matmul_into(ctx, a: Tensor, b: Tensor, out_shape, dtype) -> Tensor:
    k = a.shape[-1]
    if b.shape[0 if b.ndim == 1 else -2] != k:
        raise UnsupportedOperatorError("matmul", detail=f"shapes {a.shape} and {b.shape}")
    if a.ndim == 1 and b.ndim == 1:
        return contract(ctx, (), [k], lambda vs, rs: E.mul(a.ref(rs[0]), b.ref(rs[0])), dtype)
    if b.ndim == 1:
        batch = out_shape[:-1]

        def value(vs, rs):
            return E.mul(a.ref(*_batch_index(a, vs[:-1], batch, [vs[-1], rs[0]])), b.ref(rs[0]))

        return contract(ctx, out_shape, [k], value, dtype)
    if a.ndim == 1:
        batch = out_shape[:-1]

        def value(vs, rs):
            return E.mul(a.ref(rs[0]), b.ref(*_batch_index(b, vs[:-1], batch, [rs[0], vs[-1]])))

        return contract(ctx, out_shape, [k], value, dtype)
    batch = out_shape[:-2]

    def value(vs, rs):
        i, j = vs[-2], vs[-1]
        return E.mul(a.ref(*_batch_index(a, vs[:-2], batch, [i, rs[0]])),
                     b.ref(*_batch_index(b, vs[:-2], batch, [rs[0], j])))

    return contract(ctx, out_shape, [k], value, dtype)


@op("matmul", torch.matmul, torch.mm, torch.bmm, operator.matmul,
    methods=("matmul", "mm", "bmm", "__matmul__"))
def matmul(ctx, a, b, *, out=None):
    return matmul_into(ctx, a, b, ctx.shape, ctx.dtype)


@op("dot", torch.dot, torch.inner, torch.vdot, methods=("dot",))
def dot(ctx, a, b):
    return matmul_into(ctx, a, b, (), ctx.dtype)


@op("mv", torch.mv, methods=("mv",))
def mv(ctx, a, b):
    return matmul_into(ctx, a, b, ctx.shape, ctx.dtype)


@op("outer", torch.outer, torch.ger, methods=("outer",))
def outer(ctx, a, b):
    out = ctx.em.fresh(ctx.shape, ctx.dtype)
    ctx.em.block(ctx.shape, lambda i, j: Assign(out.ref(i, j), E.mul(a.ref(i), b.ref(j))))
    return out


def linear_into(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    shape = ctx.shape
    if weight.ndim == 1:
        out = contract(ctx, shape, [weight.shape[0]],
                       lambda vs, rs: E.mul(x.ref(*vs, rs[0]), weight.ref(rs[0])))
    else:
        out = contract(ctx, shape, [weight.shape[1]],
                       lambda vs, rs: E.mul(x.ref(*vs[:-1], rs[0]), weight.ref(vs[-1], rs[0])))
    if bias is not None:
        add_bias(ctx, out, bias, dim=-1)
    return out


def add_bias(ctx, out: Tensor, bias: Tensor, dim: int) -> None:
    """Second block ``C=C+bias`` (an accumulation onto the product), bias along ``dim`` of ``out``."""
    dim %= max(out.ndim, 1)

    def body(*vs):
        lhs = out.ref(*vs)
        b = bias.ref(vs[dim]) if bias.ndim == 1 and bias.shape[0] != 1 else ctx.em.bref(bias, vs, out.shape)
        return Assign(lhs, E.add(lhs, b))

    ctx.em.block(out.shape, body)


@op("linear", F.linear, modules=(nn.Linear,))
def linear(ctx, *args, **kwargs):
    if ctx.module is not None:
        module, x = args[0], args[1]
        return linear_into(ctx, x, ctx.known(module.weight), ctx.maybe_known(module.bias))
    x = args[0]
    weight = kwargs.get("weight", args[1] if len(args) > 1 else None)
    bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
    return linear_into(ctx, x, weight, bias)


@op("bilinear", F.bilinear, modules=(nn.Bilinear,))
def bilinear(ctx, *args):
    if ctx.module is not None:
        module, x1, x2 = args
        weight, bias = ctx.known(module.weight), ctx.maybe_known(module.bias)
    else:
        x1, x2, weight = args[:3]
        bias = args[3] if len(args) > 3 else None
    shape = ctx.shape

    def value(vs, rs):
        i, j = rs
        return E.mul(E.mul(x1.ref(*vs[:-1], i), weight.ref(vs[-1], i, j)), x2.ref(*vs[:-1], j))

    out = contract(ctx, shape, [weight.shape[1], weight.shape[2]], value)
    if bias is not None:
        add_bias(ctx, out, bias, -1)
    return out


def _scale_add(ctx, out: Tensor, other: Tensor, alpha, beta) -> None:
    def body(*vs):
        lhs = out.ref(*vs)
        prod = lhs if alpha == 1 else E.mul(alpha, lhs)
        term = ctx.em.bref(other, vs, out.shape)
        term = term if beta == 1 else E.mul(beta, term)
        return Assign(lhs, E.add(prod, term) if beta != 0 else prod)

    ctx.em.block(out.shape, body)


@op("addmm", torch.addmm, torch.baddbmm, torch.addmv, methods=("addmm", "baddbmm", "addmv"))
def addmm(ctx, inp, a, b, *, beta=1, alpha=1):
    out = matmul_into(ctx, a, b, ctx.shape, ctx.dtype)
    if alpha != 1 or beta != 0:
        _scale_add(ctx, out, inp, alpha, beta)
    return out


@op("addbmm", torch.addbmm, methods=("addbmm",))
def addbmm(ctx, inp, a, b, *, beta=1, alpha=1):
    """``beta*inp + alpha*sum_b a[b]@b[b]``: the batch is a second reduction axis, not an output dim."""
    out = contract(ctx, ctx.shape, [a.shape[0], a.shape[2]],
                   lambda vs, rs: E.mul(a.ref(rs[0], vs[0], rs[1]), b.ref(rs[0], rs[1], vs[1])))
    if alpha != 1 or beta != 0:
        _scale_add(ctx, out, inp, alpha, beta)
    return out


def parse_einsum(equation: str, operands) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise UnsupportedOperatorError("einsum",
                                       detail=f"{equation!r} does not match {len(operands)} operands")
    spare = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ell_letters = None
    expanded = []
    max_ell = 0
    for term, t in zip(terms, operands, strict=True):
        if "..." in term:
            max_ell = max(max_ell, t.ndim - (len(term) - 3))
    if max_ell:
        ell_letters = "".join(next(spare) for _ in range(max_ell))
    for term, t in zip(terms, operands, strict=True):
        if "..." in term:
            n = t.ndim - (len(term) - 3)
            term = term.replace("...", ell_letters[max_ell - n:])
        expanded.append(term)
    if rhs is None:
        counts: dict[str, int] = {}
        for term in expanded:
            for ch in term:
                counts[ch] = counts.get(ch, 0) + 1
        rhs = (ell_letters or "") + "".join(sorted(c for c, n in counts.items() if n == 1 and c.islower()))
    elif "..." in rhs:
        rhs = rhs.replace("...", ell_letters or "")
    return expanded, rhs


@op("einsum", torch.einsum)
def einsum(ctx, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    terms, rhs = parse_einsum(equation, operands)
    sizes: dict[str, int] = {}
    for term, t in zip(terms, operands, strict=True):
        for ch, size in zip(term, t.shape, strict=True):
            if size != 1 or ch not in sizes:
                sizes[ch] = max(size, sizes.get(ch, 1))
    reduced = []
    for term in terms:
        for ch in term:
            if ch not in rhs and ch not in reduced:
                reduced.append(ch)
    shape = ctx.shape

    def value(vs, rs):
        env = dict(zip(rhs, vs, strict=True)) | dict(zip(reduced, rs, strict=True))
        product = None
        for term, t in zip(terms, operands, strict=True):
            ref = t.ref(*[E.ZERO if size == 1 and sizes[ch] != 1 else env[ch]
                          for ch, size in zip(term, t.shape, strict=True)])
            product = ref if product is None else E.mul(product, ref)
        return product

    return contract(ctx, shape, [sizes[ch] for ch in reduced], value)



@op("cdist", torch.cdist)
def cdist(ctx, a, b, p=2.0, compute_mode=None):
    """``||a_i - b_j||_p`` over the last dim (batched), as a reduction then a root."""
    if p not in (1, 1.0, 2, 2.0):
        raise UnsupportedOperatorError("cdist", detail=f"p={p}", supported="p=1 or p=2")
    shape = ctx.shape
    nb = len(shape) - 2

    def value(vs, rs):
        d = E.sub(a.ref(*_batch_index(a, vs[:nb], shape[:nb], [vs[nb], rs[0]])),
                  b.ref(*_batch_index(b, vs[:nb], shape[:nb], [vs[nb + 1], rs[0]])))
        return E.mul(d, d) if p in (2, 2.0) else E.call("abs", d)

    total = contract(ctx, shape, [a.shape[-1]], value)
    if p in (1, 1.0):
        return total
    return ctx.em.elementwise(shape, ctx.dtype, [total], E.sqrt)


@op("tensordot", torch.tensordot)
def tensordot(ctx, a, b, dims=2, out=None):
    """Contract the given dims of ``a`` with those of ``b`` (an einsum with generated letters)."""
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, list | tuple) else [d] for d in dims]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ta = [next(letters) for _ in range(a.ndim)]
    tb = [None] * b.ndim
    for i, j in zip(da, db, strict=True):
        tb[j % b.ndim] = ta[i % a.ndim]
    tb = [t or next(letters) for t in tb]
    contracted = {ta[i % a.ndim] for i in da}
    out_letters = [t for t in ta if t not in contracted] + [t for t in tb if t not in contracted]
    return einsum(ctx, f"{''.join(ta)},{''.join(tb)}->{''.join(out_letters)}", a, b)


@op("matrix_power", torch.linalg.matrix_power, torch.matrix_power, methods=("matrix_power",))
def matrix_power(ctx, x, n):
    """``x @ x @ ...`` by repeated squaring; ``n = 0`` is the identity, negative powers need an inverse."""
    if n < 0:
        raise UnsupportedOperatorError("matrix_power", detail="a negative power (a matrix inverse)",
                                       supported="n >= 0")
    if n == 0:
        out = ctx.em.fresh(ctx.shape, ctx.dtype)
        ctx.em.block(ctx.shape, lambda *vs: Assign(out.ref(*vs), E.ite(E.cmp(vs[-2], "==", vs[-1]), 1, 0)))
        return out
    result, square = None, x
    while True:
        if n & 1:
            result = square if result is None else matmul_into(ctx, result, square, ctx.shape, ctx.dtype)
        n >>= 1
        if not n:
            return result if result is not x else ctx.em.elementwise(ctx.shape, ctx.dtype, [x], lambda a: a)
        square = matmul_into(ctx, square, square, ctx.shape, ctx.dtype)


@op("cross", torch.linalg.cross, torch.cross, methods=("cross",))
def cross(ctx, a, b, dim=None):
    """The 3-vector cross product along ``dim``: ``out[i] = a[i+1]*b[i+2] - a[i+2]*b[i+1]``, mod 3."""
    if ctx.node.target is torch.linalg.cross and dim is None:
        dim = -1
    if dim is None:  # torch.cross's legacy default: the first dim of size 3
        dim = next(d for d, s in enumerate(a.shape) if s == 3)
    dim %= a.ndim
    if a.shape != b.shape:
        raise UnsupportedOperatorError("cross", detail=f"broadcast shapes {a.shape} and {b.shape}",
                                       supported="operands of one shape")

    def at(t: Tensor, vs, shift: int):
        idx = list(vs)
        idx[dim] = E.imod(E.iadd(vs[dim], shift), 3)
        return t.ref(*idx)

    out = ctx.em.fresh(ctx.shape, ctx.dtype)
    ctx.em.block(ctx.shape, lambda *vs: Assign(out.ref(*vs), E.sub(E.mul(at(a, vs, 1), at(b, vs, 2)),
                                                                    E.mul(at(a, vs, 2), at(b, vs, 1)))))
    return out
