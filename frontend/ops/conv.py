"""Convolutions (1-3d) and transposed convolutions (1-3d) with stride, padding, output padding,
dilation and groups.

A padded input is first copied into an intermediate with a chained-compare guard (the public data's
form); the convolution is then one reduction block over ``N, Cout, out..., Cin/groups, kernel...``.
``padding_mode`` reflect/replicate/circular pads with ``shape.edge_pad`` first, as PyTorch does.
A transposed convolution scatters the input into a zero-initialised, stride-dilated, padded
intermediate (unwritten elements of an intermediate are 0) and runs a stride-1 convolution with the
flipped kernel over it — no data-dependent guards in the hot loop.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op
from .linalg import add_bias
from .shape import edge_pad, pad_amounts


def tup(value, n: int) -> list[int]:
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    return value * n if len(value) == 1 else value


def pad_copy(ctx, x: Tensor, lead: int, before: list[int], sizes: list[int], fill=0) -> Tensor:
    """``x`` with its trailing spatial dims embedded at offset ``before`` in a tensor of ``sizes``.

    Elements outside the input read ``fill`` through a chained-compare guard.
    """
    if all(b == 0 for b in before) and all(s <= n for s, n in zip(sizes, x.shape[lead:], strict=True)):
        return x
    shape = tuple(x.shape[:lead]) + tuple(sizes)
    out = ctx.em.fresh(shape, x.dtype)

    def body(*vs):
        cond = None
        idx = list(vs[:lead])
        for k, (b, n) in enumerate(zip(before, x.shape[lead:], strict=True)):
            v = vs[lead + k]
            if b != 0 or sizes[k] > n:
                cond = E.land(cond, E.chain(b, "<=", v, "<", b + n))
            idx.append(E.isub(v, b))
        value = x.ref(*idx)
        if cond is not None:
            value = E.ite(cond, value, fill)
        return Assign(out.ref(*vs), value)

    ctx.em.block(shape, body)
    return out


def _padding(padding, n, kernel, dilation, spatial):
    """(before, after) per spatial dim for int/tuple/'valid'/'same' padding."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * n, [0] * n
        if padding == "same":
            total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
            before = [t // 2 for t in total]
            return before, [t - b for t, b in zip(total, before, strict=True)]
        raise UnsupportedOperatorError("conv", detail=f"padding={padding!r}")
    p = tup(padding, n)
    return p, p


def conv_into(ctx, x: Tensor, weight: Tensor, bias, stride, padding, dilation, groups) -> Tensor:
    n = weight.ndim - 2
    if x.ndim != n + 2:
        raise UnsupportedOperatorError(f"conv{n}d", detail="unbatched input")
    kernel = list(weight.shape[2:])
    stride, dilation = tup(stride, n), tup(dilation, n)
    before, after = _padding(padding, n, kernel, dilation, x.shape[2:])
    out_shape = ctx.shape
    padded_sizes = [s + b + a for s, b, a in zip(x.shape[2:], before, after, strict=True)]
    # never pad beyond what the windows read
    reads = [(o - 1) * s + (k - 1) * d + 1
             for o, s, k, d in zip(out_shape[2:], stride, kernel, dilation, strict=True)]
    padded_sizes = [max(min(p, r), 1) for p, r in zip(padded_sizes, reads, strict=True)]
    src = pad_copy(ctx, x, 2, before, padded_sizes)
    cin_g = weight.shape[1]
    cout_g = out_shape[1] // groups
    return _conv_reduce(ctx, src, weight, bias, out_shape, cin_g, cout_g, groups, kernel,
                        lambda o, k, j: E.iadd(E.imul(o, stride[j]), E.imul(k, dilation[j])),
                        lambda oc, ic, channel, ks: weight.ref(oc, ic, *ks))


def _conv_reduce(ctx, src, weight, bias, out_shape, cin_g, cout_g, groups, kernel, pos_fn, w_fn):
    n = len(kernel)
    out = ctx.em.fresh(out_shape, ctx.dtype)

    def body(*vs):
        nb, oc = vs[0], vs[1]
        outs = vs[2:2 + n]
        ic = vs[2 + n]
        ks = vs[3 + n:]
        channel = ic if groups == 1 else E.iadd(E.imul(E.ifloordiv(oc, cout_g), cin_g), ic)
        spatial = [pos_fn(o, k, j) for j, (o, k) in enumerate(zip(outs, ks, strict=True))]
        lhs = out.ref(*vs[:2 + n])
        return Assign(lhs, E.add(lhs, E.mul(src.ref(nb, channel, *spatial), w_fn(oc, ic, channel, ks))))

    ctx.em.block(tuple(out_shape) + (cin_g,) + tuple(kernel), body)
    if bias is not None:
        add_bias(ctx, out, bias, dim=1)
    return out


def conv_transpose_into(ctx, x: Tensor, weight: Tensor, bias, stride, padding, output_padding, groups,
                        dilation) -> Tensor:
    n = weight.ndim - 2
    if x.ndim != n + 2:
        raise UnsupportedOperatorError(f"conv_transpose{n}d", detail="unbatched input")
    kernel = list(weight.shape[2:])
    stride, padding, dilation = tup(stride, n), tup(padding, n), tup(dilation, n)
    out_shape = ctx.shape
    q = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding, strict=True)]
    offset = [max(v, 0) for v in q]
    shift = [o - v for o, v in zip(offset, q, strict=True)]
    sizes = []
    for j in range(n):
        write_max = (x.shape[2 + j] - 1) * stride[j] + offset[j]
        read_max = out_shape[2 + j] - 1 + (kernel[j] - 1) * dilation[j] + shift[j]
        sizes.append(max(write_max, read_max) + 1)
    spread = ctx.em.fresh(tuple(x.shape[:2]) + tuple(sizes), x.dtype)

    def scatter(*vs):
        idx = list(vs[:2]) + [E.iadd(E.imul(vs[2 + j], stride[j]), offset[j]) for j in range(n)]
        return Assign(spread.ref(*idx), x.ref(*vs))

    ctx.em.block(x.shape, scatter)  # elements no write covers stay 0 (LEIR semantics)
    cin_g = x.shape[1] // groups
    cout_g = weight.shape[1]
    return _conv_reduce(
        ctx, spread, weight, bias, out_shape, cin_g, cout_g, groups, kernel,
        lambda o, k, j: E.iadd(E.iadd(o, E.imul(k, dilation[j])), shift[j]),
        lambda oc, ic, channel, ks: weight.ref(channel, E.imod(oc, cout_g) if groups > 1 else oc,
                                      *[E.isub(kernel[j] - 1, kv) for j, kv in enumerate(ks)]))


def _mod_check(module):
    if getattr(module, "padding_mode", "zeros") != "zeros":
        raise UnsupportedOperatorError(type(module).__name__, detail=f"padding_mode={module.padding_mode!r}",
                                       supported="padding_mode='zeros'")


def _edge_padded(ctx, m, x: Tensor) -> Tensor:
    """``padding_mode`` reflect/replicate/circular: as PyTorch does, pad in that mode, then convolve."""
    before, after = pad_amounts(list(m._reversed_padding_repeated_twice), x.ndim)
    return edge_pad(ctx, x, before, after, m.padding_mode)


@op("conv", F.conv1d, F.conv2d, F.conv3d, modules=(nn.Conv1d, nn.Conv2d, nn.Conv3d))
def conv(ctx, *args, **kwargs):
    if ctx.module is not None:
        m, x = args[0], args[1]
        padding = m.padding
        if m.padding_mode != "zeros":
            x, padding = _edge_padded(ctx, m, x), 0
        return conv_into(ctx, x, ctx.known(m.weight), ctx.maybe_known(m.bias), m.stride, padding,
                         m.dilation, m.groups)
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    defaults = (None, None, None, 1, 0, 1, 1)
    v = [kwargs.get(nm, args[i] if i < len(args) else d) for i, (nm, d) in enumerate(zip(names, defaults,
                                                                                           strict=True))]
    return conv_into(ctx, *v)


def _output_padding(m, x: Tensor, output_size) -> list[int]:
    """The output padding a requested ``output_size`` implies, by PyTorch's own rule (shapes only)."""
    import torch

    n = len(m.kernel_size)
    return m._output_padding(torch.empty(x.shape, device="meta"), list(output_size), m.stride, m.padding,
                             m.kernel_size, n, m.dilation)


@op("conv_transpose", F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d,
    modules=(nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d))
def conv_transpose(ctx, *args, **kwargs):
    if ctx.module is not None:
        m, x = args[0], args[1]
        _mod_check(m)
        output_size = kwargs.get("output_size", args[2] if len(args) > 2 else None)
        output_padding = m.output_padding if output_size is None else _output_padding(m, x, output_size)
        return conv_transpose_into(ctx, x, ctx.known(m.weight), ctx.maybe_known(m.bias), m.stride, m.padding,
                                   output_padding, m.groups, m.dilation)
    names = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
    defaults = (None, None, None, 1, 0, 0, 1, 1)
    v = [kwargs.get(nm, args[i] if i < len(args) else d) for i, (nm, d) in enumerate(zip(names, defaults,
                                                                                           strict=True))]
    return conv_transpose_into(ctx, *v)

