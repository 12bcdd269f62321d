"""Loss functions: MSE, L1, smooth L1, Huber, cross-entropy (class indices or probabilities), NLL,
KL divergence, BCE (with logits), hinge embedding, margin ranking, soft margin, triplet margin,
cosine similarity and pairwise distance, Poisson and Gaussian NLL, cosine embedding, multi-class margin
and multi-label soft margin.

Each is a pointwise block (or a small chain) followed by the requested reduction (``mean`` = a sum
block and a division block, as the public data writes it).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from leir.ast import Assign

from .. import expr as E
from ..emit import Tensor
from ..errors import UnsupportedOperatorError
from ..registry import op
from .reductions import mean_of, softmax_into
from .shape import reshape_to


def _shape(*ts) -> tuple[int, ...]:
    return tuple(torch.broadcast_shapes(*[t.shape for t in ts if isinstance(t, Tensor)]))


def reduce_loss(ctx, pw: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return pw
    dims = list(range(pw.ndim))
    if reduction == "sum":
        return ctx.em.reduce(pw, dims, False, "+", ctx.dtype)
    if reduction == "mean":
        return mean_of(ctx, pw, dims, False, ctx.dtype)
    raise UnsupportedOperatorError("loss", detail=f"reduction={reduction!r}")


def _get(ctx, args, kwargs, names, defaults, n_inputs):
    """(tensor args, option values) for both ``F.loss(a, b, ...)`` and ``nn.Loss(...)(a, b)``."""
    if ctx.module is not None:
        m = args[0]
        tensors = list(args[1:1 + n_inputs])
        return tensors, [getattr(m, nm, d) for nm, d in zip(names, defaults, strict=True)]
    tensors = list(args[:n_inputs])
    rest = args[n_inputs:]
    values = [kwargs.get(nm, rest[i] if i < len(rest) else d)
              for i, (nm, d) in enumerate(zip(names, defaults, strict=True))]
    for legacy in ("size_average", "reduce"):
        if kwargs.get(legacy) is not None:
            raise UnsupportedOperatorError("loss", detail=f"legacy argument {legacy}")
    return tensors, values


def _pointwise(ctx, operands, fn, dtype=None) -> Tensor:
    return ctx.em.elementwise(_shape(*operands), dtype or ctx.dtype, operands, fn)


def _simple_loss(name, functions, modules, fn, extra=()):
    names = ("size_average", "reduce", "reduction") + tuple(n for n, _ in extra)
    defaults = (None, None, "mean") + tuple(d for _, d in extra)

    def emit(ctx, *args, **kwargs):
        (a, b), values = _get(ctx, args, kwargs, names, defaults, 2)
        options = values[3:]
        pw = _pointwise(ctx, [a, b], lambda x, y: fn(x, y, *options))
        return reduce_loss(ctx, pw, values[2])

    op(name, *functions, modules=modules)(emit)


def _d(x, y):
    return E.sub(x, y)


_simple_loss("mse_loss", (F.mse_loss,), (nn.MSELoss,), lambda x, y: E.mul(_d(x, y), _d(x, y)))
_simple_loss("l1_loss", (F.l1_loss,), (nn.L1Loss,), lambda x, y: E.call("abs", _d(x, y)))


def _smooth_l1(x, y, beta):
    ad = E.call("abs", _d(x, y))
    if beta == 0:
        return ad
    return E.ite(E.cmp(ad, "<", beta), E.div(E.mul(0.5, E.mul(_d(x, y), _d(x, y))), beta),
                 E.sub(ad, 0.5 * beta))


def _huber(x, y, delta):
    ad = E.call("abs", _d(x, y))
    return E.ite(E.cmp(ad, "<", delta), E.mul(0.5, E.mul(_d(x, y), _d(x, y))),
                 E.mul(delta, E.sub(ad, 0.5 * delta)))


_simple_loss("smooth_l1_loss", (F.smooth_l1_loss,), (nn.SmoothL1Loss,), _smooth_l1, (("beta", 1.0),))
_simple_loss("huber_loss", (F.huber_loss,), (nn.HuberLoss,), _huber, (("delta", 1.0),))


def _soft_margin(x, y):
    return E.log(E.add(1, E.exp(E.neg(E.mul(y, x)))))


_simple_loss("soft_margin_loss", (F.soft_margin_loss,), (nn.SoftMarginLoss,), _soft_margin)


def _bce(x, t):
    return E.neg(E.add(E.mul(t, E.maximum(E.log(x), -100)),
                       E.mul(E.sub(1, t), E.maximum(E.log(E.sub(1, x)), -100))))


def _bce_logits(x, t):
    return E.add(E.sub(E.maximum(x, 0), E.mul(x, t)), E.log(E.add(1, E.exp(E.neg(E.call("abs", x))))))


def _weighted(name, fn, functions, modules):
    names = ("weight", "size_average", "reduce", "reduction")
    defaults = (None, None, None, "mean")

    def emit(ctx, *args, **kwargs):
        (x, t), values = _get(ctx, args, kwargs, names, defaults, 2)
        weight = values[0]
        if ctx.module is not None and weight is not None:
            weight = ctx.known(weight)
        if ctx.module is not None and getattr(ctx.module, "pos_weight", None) is not None or \
                kwargs.get("pos_weight") is not None:
            raise UnsupportedOperatorError(name, detail="pos_weight")
        pw = _pointwise(ctx, [x, t], fn)
        if weight is not None:
            pw = _pointwise(ctx, [pw, weight], E.mul)
        return reduce_loss(ctx, pw, values[3])

    op(name, *functions, modules=modules)(emit)


_weighted("binary_cross_entropy", _bce, (F.binary_cross_entropy,), (nn.BCELoss,))
_weighted("binary_cross_entropy_with_logits", _bce_logits, (F.binary_cross_entropy_with_logits,),
          (nn.BCEWithLogitsLoss,))


def nll_from_logp(ctx, logp: Tensor, target: Tensor, ignore_index: int, reduction: str,
                  weight: Tensor | None = None, smoothing: float = 0.0) -> Tensor:
    """Negative log-likelihood of integer class targets (class dim 1), skipping ``ignore_index``.

    With class ``weight`` each term is scaled by ``weight[target]`` and ``mean`` divides by the sum of
    those weights, as PyTorch does.
    """
    em = ctx.em
    shape = target.shape  # N, d1, ...

    def picked(vs):
        idx = [vs[0], target.ref(*vs), *vs[1:]]
        return logp.ref(*idx)

    def valid(vs):
        return E.cmp(target.ref(*vs), "!=", ignore_index)

    total_logp = None
    if smoothing:
        # PyTorch: (1-e)*nll + e*(-sum_c logp)/C, both over the same (non-ignored) elements
        total_logp = em.reduce(logp, [1], False, "+", ctx.dtype)

    def term(vs):
        value = E.neg(picked(vs))
        if weight is not None:
            value = E.mul(value, weight.ref(target.ref(*vs)))
        if total_logp is not None:
            classes = logp.shape[1]
            value = E.sub(E.mul(1 - smoothing, value), E.mul(smoothing / classes, total_logp.ref(*vs)))
        return value

    pw = em.fresh(shape, ctx.dtype)
    em.block(shape, lambda *vs: Assign(pw.ref(*vs), E.ite(valid(vs), term(vs), 0)))
    if reduction == "none":
        return pw
    total = em.reduce(pw, list(range(pw.ndim)), False, "+", ctx.dtype)
    if reduction == "sum":
        return total
    count = em.reduce(None, list(range(len(shape))), False, "+", ctx.dtype, shape=shape,
                      value=lambda *vs: E.ite(valid(vs), 1 if weight is None else weight.ref(target.ref(*vs)),
                                              0))
    return em.elementwise((), ctx.dtype, [total, count], E.div)


CE_NAMES = ("weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing")
CE_DEFAULTS = (None, None, -100, None, "mean", 0.0)


@op("cross_entropy", F.cross_entropy, modules=(nn.CrossEntropyLoss,))
def cross_entropy(ctx, *args, **kwargs):
    (x, t), (weight, _, ignore, _, reduction, smoothing) = _get(ctx, args, kwargs, CE_NAMES, CE_DEFAULTS, 2)
    if smoothing and weight is not None:
        raise UnsupportedOperatorError("cross_entropy", detail="label smoothing with class weights")
    if ctx.module is not None and weight is not None:
        weight = ctx.known(weight)
    logp = softmax_into(ctx, x, 1 if x.ndim > 1 else 0, log=True)
    if t.dtype.startswith("i") or t.dtype.startswith("u"):
        if x.ndim == 1:
            raise UnsupportedOperatorError("cross_entropy", detail="unbatched input")
        return nll_from_logp(ctx, logp, t, ignore, reduction, weight, smoothing)
    if weight is not None or smoothing:
        raise UnsupportedOperatorError("cross_entropy",
                                       detail="class weights or label smoothing with probability targets")
    pw = ctx.em.reduce(None, [1], False, "+", ctx.dtype, shape=x.shape,
                       value=lambda *vs: E.neg(E.mul(t.ref(*vs), logp.ref(*vs))))
    return reduce_loss(ctx, pw, reduction)


@op("nll_loss", F.nll_loss, modules=(nn.NLLLoss,))
def nll_loss(ctx, *args, **kwargs):
    names = ("weight", "size_average", "ignore_index", "reduce", "reduction")
    (x, t), (weight, _, ignore, _, reduction) = _get(ctx, args, kwargs, names, CE_DEFAULTS[:5], 2)
    if ctx.module is not None and weight is not None:
        weight = ctx.known(weight)
    return nll_from_logp(ctx, x, t, ignore, reduction, weight)


@op("kl_div", F.kl_div, modules=(nn.KLDivLoss,))
def kl_div(ctx, *args, **kwargs):
    names = ("size_average", "reduce", "reduction", "log_target")
    (x, t), (_, _, reduction, log_target) = _get(ctx, args, kwargs, names, (None, None, "mean", False), 2)
    if log_target:
        pw = _pointwise(ctx, [x, t], lambda a, b: E.mul(E.exp(b), E.sub(b, a)))
    else:
        pw = _pointwise(ctx, [x, t], lambda a, b: E.sub(E.ite(E.cmp(b, "==", 0), 0, E.mul(b, E.log(b))),
                                                        E.mul(b, a)))
    if reduction == "batchmean":
        total = ctx.em.reduce(pw, list(range(pw.ndim)), False, "+", ctx.dtype)
        return ctx.em.elementwise((), ctx.dtype, [total], lambda s: E.div(s, pw.shape[0] if pw.ndim else 1))
    return reduce_loss(ctx, pw, reduction)


def cosine_into(ctx, a: Tensor, b: Tensor, dim: int, eps: float) -> Tensor:
    shape = _shape(a, b)
    dim %= len(shape)
    em = ctx.em
    dot = em.reduce(None, [dim], False, "+", ctx.dtype, shape=shape,
                    value=lambda *vs: E.mul(em.bref(a, vs, shape), em.bref(b, vs, shape)))
    na = em.reduce(None, [dim], False, "+", ctx.dtype, shape=shape,
                   value=lambda *vs: E.mul(em.bref(a, vs, shape), em.bref(a, vs, shape)))
    nb = em.reduce(None, [dim], False, "+", ctx.dtype, shape=shape,
                   value=lambda *vs: E.mul(em.bref(b, vs, shape), em.bref(b, vs, shape)))
    return em.elementwise(dot.shape, ctx.dtype, [dot, na, nb],
                          lambda d, x, y: E.div(d, E.maximum(E.mul(E.sqrt(x), E.sqrt(y)), eps)))


@op("cosine_similarity", F.cosine_similarity, torch.cosine_similarity, modules=(nn.CosineSimilarity,))
def cosine_similarity(ctx, *args, **kwargs):
    (a, b), (dim, eps) = _get(ctx, args, kwargs, ("dim", "eps"), (1, 1e-8), 2)
    return cosine_into(ctx, a, b, dim, eps)


def pairwise_into(ctx, a: Tensor, b: Tensor, p, eps, keepdim) -> Tensor:
    shape = _shape(a, b)
    em = ctx.em
    last = len(shape) - 1

    def diff(vs):
        return E.add(E.sub(em.bref(a, vs, shape), em.bref(b, vs, shape)), eps)

    if p == 2:
        s = em.reduce(None, [last], keepdim, "+", ctx.dtype, shape=shape,
                      value=lambda *vs: E.mul(diff(vs), diff(vs)))
        return em.elementwise(s.shape, ctx.dtype, [s], E.sqrt)
    if p == 1:
        return em.reduce(None, [last], keepdim, "+", ctx.dtype, shape=shape,
                         value=lambda *vs: E.call("abs", diff(vs)))
    s = em.reduce(None, [last], keepdim, "+", ctx.dtype, shape=shape,
                  value=lambda *vs: E.pow_(E.call("abs", diff(vs)), p))
    return em.elementwise(s.shape, ctx.dtype, [s], lambda x: E.pow_(x, 1.0 / p))


@op("pairwise_distance", F.pairwise_distance, torch.pairwise_distance, modules=(nn.PairwiseDistance,))
def pairwise_distance(ctx, *args, **kwargs):
    if ctx.module is not None:
        m, a, b = args[0], args[1], args[2]
        return pairwise_into(ctx, a, b, m.norm, m.eps, m.keepdim)
    (a, b), (p, eps, keepdim) = _get(ctx, args, kwargs, ("p", "eps", "keepdim"), (2.0, 1e-6, False), 2)
    return pairwise_into(ctx, a, b, p, eps, keepdim)


TRIPLET_NAMES = ("margin", "p", "eps", "swap", "size_average", "reduce", "reduction")
TRIPLET_DEFAULTS = (1.0, 2.0, 1e-6, False, None, None, "mean")


@op("triplet_margin_loss", F.triplet_margin_loss, modules=(nn.TripletMarginLoss,))
def triplet_margin_loss(ctx, *args, **kwargs):
    if ctx.module is not None:
        m = args[0]
        a, pos, negative = args[1:4]
        margin, p, eps, swap, reduction = m.margin, m.p, m.eps, m.swap, m.reduction
    else:
        (a, pos, negative), v = _get(ctx, args, kwargs, TRIPLET_NAMES, TRIPLET_DEFAULTS, 3)
        margin, p, eps, swap, reduction = v[0], v[1], v[2], v[3], v[6]
    d_ap = pairwise_into(ctx, a, pos, p, eps, False)
    d_an = pairwise_into(ctx, a, negative, p, eps, False)
    if swap:
        d_pn = pairwise_into(ctx, pos, negative, p, eps, False)
        d_an = ctx.em.elementwise(d_an.shape, ctx.dtype, [d_an, d_pn], E.minimum)
    pw = ctx.em.elementwise(d_ap.shape, ctx.dtype, [d_ap, d_an],
                            lambda x, y: E.maximum(E.add(E.sub(x, y), margin), 0))
    return reduce_loss(ctx, pw, reduction)


@op("hinge_embedding_loss", F.hinge_embedding_loss, modules=(nn.HingeEmbeddingLoss,))
def hinge_embedding_loss(ctx, *args, **kwargs):
    names = ("margin", "size_average", "reduce", "reduction")
    (x, t), (margin, _, _, reduction) = _get(ctx, args, kwargs, names, (1.0, None, None, "mean"), 2)
    pw = _pointwise(ctx, [x, t], lambda a, y: E.add(
        E.ite(E.cmp(y, "!=", 1), E.maximum(E.sub(margin, a), 0), 0),
        E.ite(E.cmp(y, "!=", -1), a, 0)))
    return reduce_loss(ctx, pw, reduction)


@op("margin_ranking_loss", F.margin_ranking_loss, modules=(nn.MarginRankingLoss,))
def margin_ranking_loss(ctx, *args, **kwargs):
    names = ("margin", "size_average", "reduce", "reduction")
    (a, b, y), (margin, _, _, reduction) = _get(ctx, args, kwargs, names, (0.0, None, None, "mean"), 3)
    pw = _pointwise(ctx, [a, b, y], lambda p, q, s: E.maximum(E.add(E.neg(E.mul(s, E.sub(p, q))), margin), 0))
    return reduce_loss(ctx, pw, reduction)


def _log_sigmoid(x):
    """``log(sigmoid(x))`` without overflow: ``-(max(-x, 0) + log(1 + exp(-|x|)))``."""
    return E.neg(E.add(E.maximum(E.neg(x), 0), E.log(E.add(1, E.exp(E.neg(E.call("abs", x)))))))


@op("poisson_nll_loss", F.poisson_nll_loss, modules=(nn.PoissonNLLLoss,))
def poisson_nll_loss(ctx, *args, **kwargs):
    names = ("log_input", "full", "size_average", "eps", "reduce", "reduction")
    (x, t), (log_input, full, _, eps, _, reduction) = _get(
        ctx, args, kwargs, names, (True, False, None, 1e-8, None, "mean"), 2)

    def term(a, y):
        value = E.sub(E.exp(a), E.mul(y, a)) if log_input else E.sub(a, E.mul(y, E.log(E.add(a, eps))))
        if full:  # Stirling's approximation of log(y!), only where y > 1 (as PyTorch)
            stirling = E.add(E.sub(E.mul(y, E.log(y)), y), E.mul(0.5, E.log(E.mul(2 * math.pi, y))))
            value = E.add(value, E.ite(E.cmp(y, ">", 1), stirling, 0))
        return value

    return reduce_loss(ctx, _pointwise(ctx, [x, t], term), reduction)


@op("gaussian_nll_loss", F.gaussian_nll_loss, modules=(nn.GaussianNLLLoss,))
def gaussian_nll_loss(ctx, *args, **kwargs):
    (x, t, var), (full, eps, reduction) = _get(ctx, args, kwargs, ("full", "eps", "reduction"),
                                                (False, 1e-6, "mean"), 3)
    if var.ndim == x.ndim - 1:  # PyTorch reads a var without the last dim as one variance per row
        var = reshape_to(ctx, var, (*var.shape, 1))

    def term(a, y, v):
        clamped = E.maximum(v, eps)
        value = E.mul(0.5, E.add(E.log(clamped), E.div(E.mul(E.sub(a, y), E.sub(a, y)), clamped)))
        return E.add(value, 0.5 * math.log(2 * math.pi)) if full else value

    return reduce_loss(ctx, _pointwise(ctx, [x, t, var], term), reduction)


@op("cosine_embedding_loss", F.cosine_embedding_loss, modules=(nn.CosineEmbeddingLoss,))
def cosine_embedding_loss(ctx, *args, **kwargs):
    """PyTorch's form: ``cos = <a,b> / sqrt((|a|^2+1e-12)(|b|^2+1e-12))`` over the last dim; ``1-cos`` where
    ``y == 1``, ``max(cos - margin, 0)`` where ``y == -1``, 0 elsewhere."""
    names = ("margin", "size_average", "reduce", "reduction")
    (a, b, y), (margin, _, _, reduction) = _get(ctx, args, kwargs, names, (0.0, None, None, "mean"), 3)
    em, last = ctx.em, a.ndim - 1

    def sum_of(p, q):
        return em.reduce(None, [last], False, "+", ctx.dtype, shape=a.shape,
                         value=lambda *vs: E.mul(p.ref(*vs), q.ref(*vs)))

    dot, sa, sb = sum_of(a, b), sum_of(a, a), sum_of(b, b)

    def term(d, p, q, s):
        cos = E.div(d, E.sqrt(E.mul(E.add(p, 1e-12), E.add(q, 1e-12))))
        return E.add(E.ite(E.cmp(s, "==", 1), E.sub(1, cos), 0),
                     E.ite(E.cmp(s, "==", -1), E.maximum(E.sub(cos, margin), 0), 0))

    return reduce_loss(ctx, em.elementwise(dot.shape, ctx.dtype, [dot, sa, sb, y], term), reduction)


@op("multi_margin_loss", F.multi_margin_loss, modules=(nn.MultiMarginLoss,))
def multi_margin_loss(ctx, *args, **kwargs):
    """``sum_{i != y} max(0, margin - x[y] + x[i])^p / C`` per row (``weight[y]`` scales each term)."""
    names = ("p", "margin", "weight", "size_average", "reduce", "reduction")
    (x, t), (p, margin, weight, _, _, reduction) = _get(ctx, args, kwargs, names,
                                                        (1, 1.0, None, None, None, "mean"), 2)
    if x.ndim != 2:
        raise UnsupportedOperatorError("multi_margin_loss", detail=f"a {x.ndim}-d input",
                                       supported="a 2-d (N, C) input")
    if ctx.module is not None and weight is not None:
        weight = ctx.known(weight)
    classes = x.shape[1]

    def term(n, i):
        hinge = E.maximum(E.add(E.sub(margin, x.ref(n, t.ref(n))), x.ref(n, i)), 0)
        hinge = hinge if p == 1 else E.mul(hinge, hinge)
        if weight is not None:
            hinge = E.mul(weight.ref(t.ref(n)), hinge)
        return E.ite(E.cmp(i, "!=", t.ref(n)), E.div(hinge, classes), 0)

    pw = ctx.em.reduce(None, [1], False, "+", ctx.dtype, shape=x.shape, value=term)
    return reduce_loss(ctx, pw, reduction)


@op("multilabel_soft_margin_loss", F.multilabel_soft_margin_loss, modules=(nn.MultiLabelSoftMarginLoss,))
def multilabel_soft_margin_loss(ctx, *args, **kwargs):
    """``-mean_c(y*logsigmoid(x) + (1-y)*logsigmoid(-x))`` per sample (``weight`` scales each class)."""
    names = ("weight", "size_average", "reduce", "reduction")
    (x, y), (weight, _, _, reduction) = _get(ctx, args, kwargs, names, (None, None, None, "mean"), 2)
    if ctx.module is not None and weight is not None:
        weight = ctx.known(weight)
    em, last = ctx.em, x.ndim - 1
    shape = _shape(x, y)

    def term(*vs):
        a, b = em.bref(x, vs, shape), em.bref(y, vs, shape)
        value = E.neg(E.add(E.mul(b, _log_sigmoid(a)), E.mul(E.sub(1, b), _log_sigmoid(E.neg(a)))))
        return value if weight is None else E.mul(value, em.bref(weight, vs, shape))

    total = em.reduce(None, [last], False, "+", ctx.dtype, shape=shape, value=term)
    pw = em.elementwise(total.shape, ctx.dtype, [total], lambda s: E.div(s, shape[last]))
    return reduce_loss(ctx, pw, reduction)
