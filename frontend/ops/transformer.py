"""Composite transformer modules: ``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder``.

fx keeps them as leaves (their forward branches on tensor properties to pick a fused fast path), so each
is emitted here from the emitters of its parts, in the order PyTorch's slow path runs them:
post-norm ``x = norm1(x + attn(x)); x = norm2(x + ff(x))`` or, with ``norm_first``,
``x = x + attn(norm1(x)); x = x + ff(norm2(x))`` where ``ff(x) = linear2(activation(linear1(x)))``.
The parts only need the shape and dtype of their result, which a ``meta`` tensor carries.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import FUNCTIONS, MODULES, Ctx, op
from .attention import multi_head_attention
from .linalg import linear
from .norms import layer_norm

NAME = "TransformerEncoderLayer"


def _part(ctx, shape, module=None) -> Ctx:
    """A context for one part: the same emitter and node, a ``meta`` stand-in for the part's result."""
    return Ctx(ctx.em, ctx.node, torch.empty(shape, dtype=ctx.real.dtype, device="meta"), module)


def _check_eval_like(m: nn.TransformerEncoderLayer) -> None:
    drops = [m.dropout.p, m.dropout1.p, m.dropout2.p, m.self_attn.dropout]
    if m.training and any(p > 0 for p in drops):
        raise UnsupportedOperatorError(NAME, detail=f"dropout {max(drops)} in training mode",
                                       supported="eval mode or dropout=0.0")


def _activation(ctx, m: nn.TransformerEncoderLayer, x: Tensor) -> Tensor:
    act = m.activation
    part = _part(ctx, x.shape, act if isinstance(act, nn.Module) else None)
    if isinstance(act, nn.Module) and type(act) in MODULES:
        return MODULES[type(act)].fn(part, act, x)
    if not isinstance(act, nn.Module) and act in FUNCTIONS:
        return FUNCTIONS[act].fn(part, x)
    raise UnsupportedOperatorError(NAME, detail=f"activation {act!r}", supported="relu, gelu and the like")


def _add(ctx, a: Tensor, b: Tensor) -> Tensor:
    return ctx.em.elementwise(a.shape, a.dtype, [a, b], E.add)


def _self_attention(ctx, m, x: Tensor, mask, padding_mask, is_causal: bool) -> Tensor:
    out, _ = multi_head_attention(_part(ctx, x.shape), m.self_attn, x, x, x, key_padding_mask=padding_mask,
                                  need_weights=False, attn_mask=mask, is_causal=is_causal)
    return out


def _feed_forward(ctx, m, x: Tensor) -> Tensor:
    hidden = linear(_part(ctx, (*x.shape[:-1], m.linear1.out_features), m.linear1), m.linear1, x)
    return linear(_part(ctx, x.shape, m.linear2), m.linear2, _activation(ctx, m, hidden))


def _norm(ctx, norm: nn.LayerNorm, x: Tensor) -> Tensor:
    return layer_norm(_part(ctx, x.shape, norm), norm, x)


def encoder_layer_into(ctx, m: nn.TransformerEncoderLayer, x: Tensor, mask=None, padding_mask=None,
                       is_causal: bool = False) -> Tensor:
    _check_eval_like(m)
    if m.norm_first:
        x = _add(ctx, x, _self_attention(ctx, m, _norm(ctx, m.norm1, x), mask, padding_mask, is_causal))
        return _add(ctx, x, _feed_forward(ctx, m, _norm(ctx, m.norm2, x)))
    x = _norm(ctx, m.norm1, _add(ctx, x, _self_attention(ctx, m, x, mask, padding_mask, is_causal)))
    return _norm(ctx, m.norm2, _add(ctx, x, _feed_forward(ctx, m, x)))


@op("transformer_encoder_layer", modules=(nn.TransformerEncoderLayer,))
def transformer_encoder_layer(ctx, m, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
    return encoder_layer_into(ctx, m, src, src_mask, src_key_padding_mask, is_causal)


@op("transformer_encoder", modules=(nn.TransformerEncoder,))
def transformer_encoder(ctx, m, src, mask=None, src_key_padding_mask=None, is_causal=None):
    """The layers in turn, then the optional final norm (the slow path; no nested tensors)."""
    x = src
    for layer in m.layers:
        x = encoder_layer_into(ctx, layer, x, mask, src_key_padding_mask, bool(is_causal))
    return x if m.norm is None else _norm(ctx, m.norm, x)
