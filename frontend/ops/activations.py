"""Activation functions, spelled out from LEIR's primitives (``exp log sqrt abs erf max min if_then_else``).

Formulas are chosen to saturate without NaN (``tanh(x) = 1-2/(exp(2x)+1)``), and follow PyTorch's
definitions exactly, including ``softplus``'s linear threshold and ``mish``'s use of it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .. import expr as E
from ..errors import UnsupportedOperatorError
from ..registry import op
from .elementwise import ew

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805
GELU_TANH_C = 0.7978845608028654  # sqrt(2/pi)
INV_SQRT2 = 0.7071067811865476


def relu_expr(x):
    return E.maximum(x, 0)


def softplus_expr(x, beta=1.0, threshold=20.0):
    bx = x if beta == 1 else E.mul(x, beta)
    soft = E.log(E.add(1, E.exp(bx)))
    if beta != 1:
        soft = E.div(soft, beta)
    return E.ite(E.cmp(bx, ">", threshold), x, soft)


def gelu_expr(x, approximate="none"):
    if approximate == "tanh":
        inner = E.mul(GELU_TANH_C, E.add(x, E.mul(0.044715, E.mul(E.mul(x, x), x))))
        return E.mul(E.mul(0.5, x), E.add(1, E.tanh(inner)))
    return E.mul(E.mul(0.5, x), E.add(1, E.call("erf", E.mul(x, INV_SQRT2))))


def elu_expr(x, alpha=1.0, scale=1.0, input_scale=1.0):
    xi = x if input_scale == 1 else E.mul(x, input_scale)
    neg_part = E.sub(E.exp(xi), 1)
    if alpha != 1:
        neg_part = E.mul(alpha, neg_part)
    out = E.ite(E.cmp(x, ">", 0), x, neg_part)
    return out if scale == 1 else E.mul(scale, out)


def hardtanh_expr(x, lo=-1.0, hi=1.0):
    return E.minimum(E.maximum(x, lo), hi)


def hardsigmoid_expr(x):
    return E.div(E.minimum(E.maximum(E.add(x, 3), 0), 6), 6)


def _mod_or_fn(ctx, args, kwargs, names_defaults):
    """Unify ``F.fn(x, a=..)``, ``x.fn(a=..)`` and ``nn.Fn(a=..)(x)`` into (x, parameter values)."""
    if ctx.module is not None:
        module, x = args[0], args[1]
        return x, [getattr(module, name, default) for name, default in names_defaults]
    x, rest = args[0], list(args[1:])
    values = []
    for i, (name, default) in enumerate(names_defaults):
        values.append(kwargs.get(name, rest[i] if i < len(rest) else default))
    return x, values


def activation(name, functions=(), methods=(), modules=(), params=()):
    def decorate(fn):
        def emit(ctx, *args, **kwargs):
            x, values = _mod_or_fn(ctx, args, kwargs, params)
            return ew(ctx, [x], lambda a: fn(a, *values))

        op(name, *functions, methods=methods, modules=modules)(emit)
        return fn

    return decorate


@activation("relu", (F.relu, torch.relu, F.relu_, torch.relu_), ("relu", "relu_"), (nn.ReLU,))
def _relu(x):
    return relu_expr(x)


@activation("relu6", (F.relu6,), (), (nn.ReLU6,))
def _relu6(x):
    return hardtanh_expr(x, 0, 6)


@activation("leaky_relu", (F.leaky_relu, F.leaky_relu_), (), (nn.LeakyReLU,), (("negative_slope", 0.01),))
def _leaky_relu(x, slope):
    return E.ite(E.cmp(x, ">", 0), x, E.mul(x, slope))


@op("rrelu", F.rrelu, F.rrelu_, torch.rrelu, modules=(nn.RReLU,))
def rrelu(ctx, *args, **kwargs):
    """Evaluation-mode RReLU: a leaky ReLU with the mean slope ``(lower + upper) / 2``; training draws
    random slopes, which no static program can reproduce."""
    x, (lower, upper, training) = _mod_or_fn(ctx, args, kwargs,
                                             (("lower", 1 / 8), ("upper", 1 / 3), ("training", False)))
    if training:
        raise UnsupportedOperatorError("rrelu", detail="in training mode (random slopes)",
                                       supported="rrelu in eval mode (training=False, module.eval())")
    slope = (lower + upper) / 2
    return ew(ctx, [x], lambda a: E.ite(E.cmp(a, ">=", 0), a, E.mul(a, slope)))


@activation("elu", (F.elu, F.elu_), (), (nn.ELU,), (("alpha", 1.0),))
def _elu(x, alpha):
    return elu_expr(x, alpha)


@activation("celu", (F.celu, torch.celu), (), (nn.CELU,), (("alpha", 1.0),))
def _celu(x, alpha):
    return elu_expr(x, alpha, input_scale=1.0 / alpha)


@activation("selu", (F.selu, torch.selu), (), (nn.SELU,))
def _selu(x):
    return elu_expr(x, SELU_ALPHA, SELU_SCALE)


@activation("gelu", (F.gelu,), (), (nn.GELU,), (("approximate", "none"),))
def _gelu(x, approximate):
    return gelu_expr(x, approximate)


@activation("silu", (F.silu,), (), (nn.SiLU,))
def _silu(x):
    return E.div(x, E.add(1, E.exp(E.neg(x))))


@activation("mish", (F.mish,), (), (nn.Mish,))
def _mish(x):
    return E.mul(x, E.tanh(softplus_expr(x)))


@activation("softplus", (F.softplus,), (), (nn.Softplus,), (("beta", 1.0), ("threshold", 20.0)))
def _softplus(x, beta, threshold):
    return softplus_expr(x, beta, threshold)


@activation("softsign", (F.softsign,), (), (nn.Softsign,))
def _softsign(x):
    return E.div(x, E.add(1, E.call("abs", x)))


@activation("hardtanh", (F.hardtanh, F.hardtanh_), (), (nn.Hardtanh,), (("min_val", -1.0), ("max_val", 1.0)))
def _hardtanh(x, lo, hi):
    return hardtanh_expr(x, lo, hi)


@activation("hardsigmoid", (F.hardsigmoid,), (), (nn.Hardsigmoid,))
def _hardsigmoid(x):
    return hardsigmoid_expr(x)


@activation("hardswish", (F.hardswish,), (), (nn.Hardswish,))
def _hardswish(x):
    return E.div(E.mul(x, E.minimum(E.maximum(E.add(x, 3), 0), 6)), 6)


@activation("sigmoid", (torch.sigmoid, F.sigmoid, torch.special.expit), ("sigmoid", "sigmoid_"),
            (nn.Sigmoid,))
def _sigmoid(x):
    return E.sigmoid(x)


@activation("tanh", (torch.tanh, F.tanh), ("tanh", "tanh_"), (nn.Tanh,))
def _tanh(x):
    return E.tanh(x)


@activation("tanhshrink", (F.tanhshrink,), (), (nn.Tanhshrink,))
def _tanhshrink(x):
    return E.sub(x, E.tanh(x))


@activation("logsigmoid", (F.logsigmoid,), (), (nn.LogSigmoid,))
def _logsigmoid(x):
    return E.sub(E.minimum(x, 0), E.log(E.add(1, E.exp(E.neg(E.call("abs", x))))))


@activation("softshrink", (F.softshrink,), (), (nn.Softshrink,), (("lambd", 0.5),))
def _softshrink(x, lambd):
    return E.ite(E.cmp(x, ">", lambd), E.sub(x, lambd), E.ite(E.cmp(x, "<", -lambd), E.add(x, lambd), 0))


@activation("hardshrink", (F.hardshrink,), (), (nn.Hardshrink,), (("lambd", 0.5),))
def _hardshrink(x, lambd):
    return E.ite(E.lor(E.cmp(x, ">", lambd), E.cmp(x, "<", -lambd)), x, 0)


@activation("threshold", (F.threshold,), (), (nn.Threshold,), (("threshold", 0.0), ("value", 0.0)))
def _threshold(x, threshold, value):
    return E.ite(E.cmp(x, ">", threshold), x, value)


@op("prelu", F.prelu, modules=(nn.PReLU,))
def prelu(ctx, *args):
    if ctx.module is not None:
        x, weight = args[1], ctx.known(args[0].weight)
    else:
        x, weight = args[0], args[1]
    shape = ctx.shape

    def fn(*vs):
        xr = ctx.em.bref(x, vs, shape)
        w = weight.ref(*([vs[1]] if weight.numel > 1 else [0] * weight.ndim))
        return ite_prelu(xr, w)

    from leir.ast import Assign

    out = ctx.em.fresh(shape, ctx.dtype)
    ctx.em.block(shape, lambda *vs: Assign(out.ref(*vs), fn(*vs)))
    return out


def ite_prelu(x, w):
    return E.ite(E.cmp(x, ">", 0), x, E.mul(w, x))


@op("glu", F.glu, modules=(nn.GLU,))
def glu(ctx, *args, **kwargs):
    """``a * sigmoid(b)`` for the two halves of ``dim``."""
    if ctx.module is not None:
        x, dim = args[1], args[0].dim
    else:
        x, dim = args[0], kwargs.get("dim", args[1] if len(args) > 1 else -1)
    dim %= x.ndim
    half = x.shape[dim] // 2
    from leir.ast import Assign

    out = ctx.em.fresh(ctx.shape, ctx.dtype)

    def body(*vs):
        second = list(vs)
        second[dim] = E.iadd(vs[dim], half)
        return Assign(out.ref(*vs), E.mul(x.ref(*vs), E.sigmoid(x.ref(*second))))

    ctx.em.block(ctx.shape, body)
    return out
