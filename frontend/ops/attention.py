"""``F.scaled_dot_product_attention``: scores, scale and mask, softmax, weighted sum of values.

Causal masks (PyTorch's top-left ``tril``), boolean and additive ``attn_mask``, a custom ``scale`` and
grouped-query heads (``enable_gqa``: query head ``h`` reads key/value head ``h // (Hq/Hkv)``).
"""

from __future__ import annotations

import math

import torch.nn.functional as F
from torch import nn

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op
from .linalg import contract
from .reductions import softmax_into


def _kv_index(kv: Tensor, q: Tensor, batch_vars, tail, gqa_ratio: int):
    """Subscripts of a key/value tensor for the query batch/head vars (GQA maps heads down)."""
    nb = kv.ndim - 2
    offset = len(batch_vars) - nb
    idx = []
    for j in range(nb):
        v = batch_vars[j + offset]
        size = kv.shape[j]
        if j == nb - 1 and gqa_ratio > 1:
            v = E.ifloordiv(v, gqa_ratio)
        elif size == 1 and q.shape[j + offset] != 1:
            v = E.ZERO
        idx.append(v)
    return idx + list(tail)


@op("scaled_dot_product_attention", F.scaled_dot_product_attention)
def sdpa(ctx, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
         enable_gqa=False):
    if dropout_p:
        raise UnsupportedOperatorError("scaled_dot_product_attention", detail=f"dropout_p={dropout_p}")
    q, k, v = query, key, value
    L, S, Ed = q.shape[-2], k.shape[-2], q.shape[-1]
    batch = q.shape[:-2]
    ratio = 1
    if q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        if not enable_gqa:
            raise UnsupportedOperatorError("scaled_dot_product_attention", detail="head counts differ")
        ratio = q.shape[-3] // k.shape[-3]
    scale = 1.0 / math.sqrt(Ed) if scale is None else scale
    nb = len(batch)
    scores = contract(ctx, tuple(batch) + (L, S), [Ed],
                      lambda vs, rs: E.mul(q.ref(*vs[:nb], vs[nb], rs[0]),
                                           k.ref(*_kv_index(k, q, vs[:nb], [vs[nb + 1], rs[0]], ratio))))
    shape = scores.shape
    masked = ctx.em.fresh(shape, ctx.dtype)

    def mask_body(*vs):
        value_ = E.mul(scores.ref(*vs), scale)
        if attn_mask is not None:
            m = ctx.em.bref(attn_mask, vs, shape)
            # PyTorch turns a boolean mask into an additive one (0 / -inf): a NaN or +inf score at a
            # masked position still gives NaN there, as in the reference (a causal mask overwrites)
            value_ = E.ite(m, value_, E.add(value_, -math.inf)) if attn_mask.dtype == "bool" \
                else E.add(value_, m)
        if is_causal:
            value_ = E.ite(E.cmp(vs[-1], ">", vs[-2]), -math.inf, value_)
        return Assign(masked.ref(*vs), value_)

    ctx.em.block(shape, mask_body)
    probs = softmax_into(ctx, masked, -1)
    Ev = v.shape[-1]
    return contract(ctx, tuple(batch) + (L, Ev), [S],
                    lambda vs, rs: E.mul(probs.ref(*vs[:nb], vs[nb], rs[0]),
                                         v.ref(*_kv_index(v, q, vs[:nb], [rs[0], vs[nb + 1]], ratio))))


def _project(ctx, x: Tensor, weight: Tensor, bias, offset: int, size: int, batch_first: bool,
             dtype: str) -> Tensor:
    """``x @ W[offset:offset+size].T + b[offset:...]`` as ``[N, L, size]`` (rows of a packed projection)."""
    if batch_first:
        n, length = x.shape[0], x.shape[1]

        def read(vs, k):
            return x.ref(vs[0], vs[1], k)
    else:
        length, n = x.shape[0], x.shape[1]

        def read(vs, k):
            return x.ref(vs[1], vs[0], k)
    out = contract(ctx, (n, length, size), [x.shape[2]],
                   lambda vs, rs: E.mul(read(vs, rs[0]), weight.ref(E.iadd(vs[2], offset), rs[0])), dtype)
    if bias is not None:
        def body(*vs):
            lhs = out.ref(*vs)
            return Assign(lhs, E.add(lhs, bias.ref(E.iadd(vs[2], offset))))

        ctx.em.block(out.shape, body)
    return out


@op("multi_head_attention", modules=(nn.MultiheadAttention,))
def multi_head_attention(ctx, m, query, key, value, key_padding_mask=None, need_weights=True,
                         attn_mask=None, average_attn_weights=True, is_causal=False):
    """``nn.MultiheadAttention``: packed in-projection, per-head scores, masks, softmax, out-projection.

    MHA masks are the opposite of SDPA's: a ``True`` in ``attn_mask``/``key_padding_mask`` means *ignore*.
    """
    name = "MultiheadAttention"
    if m.training and m.dropout > 0:
        raise UnsupportedOperatorError(name, detail=f"dropout={m.dropout} in training mode")
    if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
        raise UnsupportedOperatorError(name, detail="kdim/vdim, add_bias_kv or add_zero_attn")
    if query.ndim != 3:
        raise UnsupportedOperatorError(name, detail="unbatched input")
    if is_causal and attn_mask is None:
        raise UnsupportedOperatorError(name, detail="is_causal without attn_mask")
    bf = m.batch_first
    e, heads = m.embed_dim, m.num_heads
    hd = e // heads
    weight = ctx.known(m.in_proj_weight)
    bias = ctx.maybe_known(m.in_proj_bias)
    dtype = _leir(ctx.real[0])
    q = _project(ctx, query, weight, bias, 0, e, bf, dtype)
    k = _project(ctx, key, weight, bias, e, e, bf, dtype)
    v = _project(ctx, value, weight, bias, 2 * e, e, bf, dtype)
    n, length, source = q.shape[0], q.shape[1], k.shape[1]
    scores = contract(ctx, (n, heads, length, source), [hd], lambda vs, rs: E.mul(
        q.ref(vs[0], vs[2], E.iadd(E.imul(vs[1], hd), rs[0])),
        k.ref(vs[0], vs[3], E.iadd(E.imul(vs[1], hd), rs[0]))), dtype)
    masked = ctx.em.fresh(scores.shape, dtype)
    scale = 1.0 / math.sqrt(hd)

    def mask_body(nb, h, i, j):
        value_ = E.mul(scores.ref(nb, h, i, j), scale)
        if attn_mask is not None:
            am = (attn_mask.ref(i, j) if attn_mask.ndim == 2
                  else attn_mask.ref(E.iadd(E.imul(nb, heads), h), i, j))
            value_ = E.ite(am, -math.inf, value_) if attn_mask.dtype == "bool" else E.add(value_, am)
        if key_padding_mask is not None:
            kp = key_padding_mask.ref(nb, j)
            value_ = E.ite(kp, -math.inf, value_) if key_padding_mask.dtype == "bool" else E.add(value_, kp)
        return Assign(masked.ref(nb, h, i, j), value_)

    ctx.em.block(scores.shape, mask_body)
    probs = softmax_into(_Typed(ctx, dtype), masked, -1)
    heads_out = contract(ctx, (n, length, e), [source], lambda vs, rs: E.mul(
        probs.ref(vs[0], E.ifloordiv(vs[2], hd), vs[1], rs[0]),
        v.ref(vs[0], rs[0], vs[2])), dtype)
    out_w, out_b = ctx.known(m.out_proj.weight), ctx.maybe_known(m.out_proj.bias)
    out_shape = (n, length, e) if bf else (length, n, e)

    def project_value(vs, rs):
        nb, pos = (vs[0], vs[1]) if bf else (vs[1], vs[0])
        return E.mul(heads_out.ref(nb, pos, rs[0]), out_w.ref(vs[2], rs[0]))

    out = contract(ctx, out_shape, [e], project_value, dtype)
    if out_b is not None:
        from .linalg import add_bias

        add_bias(ctx, out, out_b, -1)
    if not need_weights:
        return (out, None)
    if average_attn_weights:
        total = ctx.em.reduce(probs, [1], False, "+", dtype)
        weights = ctx.em.elementwise(total.shape, dtype, [total], lambda t: E.div(t, heads))
    else:
        weights = probs
    return (out, weights)


class _Typed:
    """A context whose ``dtype`` is fixed (MHA's node result is a tuple, not one tensor)."""

    def __init__(self, ctx, dtype: str) -> None:
        self.em, self.node, self.module, self.dtype = ctx.em, ctx.node, ctx.module, dtype


def _leir(t) -> str:
    from ..registry import leir_dtype

    return leir_dtype(t.dtype)
