"""Sliding windows: ``Tensor.unfold`` (windows along one dimension) and ``F.unfold``/``nn.Unfold`` (im2col).

Both are pure gathers, so each is one copy block whose subscripts say where a window element comes from:
window ``i`` element ``k`` of ``Tensor.unfold(d, size, step)`` reads ``i*step+k`` along ``d``; im2col row
``c*kh*kw + a*kw + b``, column ``oy*ow + ox`` reads pixel ``(oy*sh + a*dh, ox*sw + b*dw)`` of channel ``c``
of a zero-padded copy (made as the convolutions make theirs). Vision transformers write their patch
embedding this way (``img.unfold(2, p, p).unfold(3, p, p)``).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op
from .conv import pad_copy
from .shape import copy_block


def _pair(value) -> tuple[int, int]:
    """An ``int`` or a pair, as a pair (the ``_pair`` rule of the conv and fold modules)."""
    if isinstance(value, int):
        return value, value
    first, second = value
    return int(first), int(second)


@op("unfold", methods=("unfold",))
def unfold_windows(ctx, x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``x.unfold(dimension, size, step)``: the windows replace ``dimension``; a new last dimension of
    ``size`` walks inside a window."""
    d = dimension % x.ndim

    def index(vs):
        *outer, k = vs
        return [E.iadd(E.imul(v, step), k) if j == d else v for j, v in enumerate(outer)]

    return copy_block(ctx, ctx.shape, x.dtype, index, x)


@op("im2col", F.unfold, modules=(nn.Unfold,))
def im2col(ctx, *args, **kwargs) -> Tensor:
    """``F.unfold``/``nn.Unfold`` on a (N, C, H, W) or (C, H, W) input → (N, C*kh*kw, L)."""
    if ctx.module is not None:
        m, x = args[0], args[1]
        kernel, dilation, padding, stride = m.kernel_size, m.dilation, m.padding, m.stride
    else:
        names = ("input", "kernel_size", "dilation", "padding", "stride")
        given = {**dict(zip(names, args, strict=False)), **kwargs}
        x, kernel = given["input"], given["kernel_size"]
        dilation, padding, stride = given.get("dilation", 1), given.get("padding", 0), given.get("stride", 1)
    if x.ndim not in (3, 4):
        raise UnsupportedOperatorError("im2col", detail=f"a {x.ndim}-d input",
                                       supported="(N, C, H, W) or (C, H, W) inputs")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel, dilation, padding, stride))
    # zero padding as the convolutions do it: a guarded copy first, so the gather below stays in bounds
    padded = pad_copy(ctx, x, x.ndim - 2, [ph, pw], [x.shape[-2] + 2 * ph, x.shape[-1] + 2 * pw])
    ow = (padded.shape[-1] - dw * (kw - 1) - 1) // sw + 1

    def source(vs):
        *lead, row, col = vs
        a, b = E.imod(E.ifloordiv(row, kw), kh), E.imod(row, kw)
        y = E.iadd(E.imul(E.ifloordiv(col, ow), sh), E.imul(a, dh))
        z = E.iadd(E.imul(E.imod(col, ow), sw), E.imul(b, dw))
        return [*lead, E.ifloordiv(row, kh * kw), y, z]

    return copy_block(ctx, ctx.shape, x.dtype, source, padded)
