"""``F.scaled_dot_product_attention``: scores, scale and mask, softmax, weighted sum of values.

Causal masks (PyTorch's top-left ``tril``), boolean and additive ``attn_mask``, a custom ``scale`` and
grouped-query heads (``enable_gqa``: query head ``h`` reads key/value head ``h // (Hq/Hkv)``).
"""

from __future__ import annotations

import math

import torch.nn.functional as F

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
            value_ = E.ite(m, value_, -math.inf) if attn_mask.dtype == "bool" else E.add(value_, m)
        if is_causal:
            value_ = E.ite(E.cmp(vs[-1], ">", vs[-2]), -math.inf, value_)
        return Assign(masked.ref(*vs), value_)

    ctx.em.block(shape, mask_body)
    probs = softmax_into(ctx, masked, -1)
    Ev = v.shape[-1]
    return contract(ctx, tuple(batch) + (L, Ev), [S],
                    lambda vs, rs: E.mul(probs.ref(*vs[:nb], vs[nb], rs[0]),
                                         v.ref(*_kv_index(v, q, vs[:nb], [rs[0], vs[nb + 1]], ratio))))
