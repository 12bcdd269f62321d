"""Operator families: translate a small module, check it, run it (LEIR interpreter) and compare with eager
PyTorch in f64 (tight) and f32."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from leir.ast import Assign, statements

from .helpers import translate_and_run


class _Fn1(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a):
        return self.fn(a)


class _Fn2(_Fn1):
    def forward(self, a, b):
        return self.fn(a, b)


class _Fn3(_Fn1):
    def forward(self, a, b, c):
        return self.fn(a, b, c)


class _Fn4(_Fn1):
    def forward(self, a, b, c, d):
        return self.fn(a, b, c, d)


class _Fn5(_Fn1):
    def forward(self, a, b, c, d, e):
        return self.fn(a, b, c, d, e)


def Fn(fn) -> nn.Module:
    """Wraps a function of the inputs as a module with a fixed-arity forward (fx cannot trace ``*args``)."""
    arity = len([p for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty])
    return (_Fn1, _Fn2, _Fn3, _Fn4, _Fn5)[arity - 1](fn)


def r(*shape, scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g, dtype=torch.float64) * scale


def pos(*shape, seed=0):
    return r(*shape, seed=seed).abs() + 0.1


def probs(*shape, dim=-1, seed=0):
    return torch.softmax(r(*shape, seed=seed), dim=dim)


def ints(high, *shape, seed=0):
    g = torch.Generator().manual_seed(seed + 7)
    return torch.randint(0, high, shape, generator=g)


CASES: dict[str, tuple] = {}


def case(name, model, inputs):
    CASES[name] = (model, inputs)


# ------------------------------------------------------------------------------- elementwise family
case("add_broadcast", lambda: Fn(lambda a, b: a + b * 2 - 1), lambda: [r(3, 4, 5), r(4, 1)])
case("sub_div_pow", lambda: Fn(lambda a, b: (a - b) / (b * b + 1) + a ** 3 + 2 ** a), lambda: [r(2, 5), r(5)])
case("rsub_neg", lambda: Fn(lambda a: 1 - a + (-a) * 0.5), lambda: [r(4, 3)])
case("unary_math", lambda: Fn(lambda a: torch.exp(-a) + torch.log(a) + torch.sqrt(a) - torch.rsqrt(a)
                              + torch.erf(a) + torch.reciprocal(a) + a.square() + torch.log1p(a)),
     lambda: [pos(3, 6)])
case("abs_sign", lambda: Fn(lambda a: torch.abs(a) * torch.sign(a)), lambda: [r(5, 4)])
case("erfc_hypot", lambda: Fn(lambda a, b: (torch.erfc(a), torch.special.erfc(a * 2), torch.hypot(a, b),
                                            a.hypot(b[0]))), lambda: [r(3, 5), r(3, 5, seed=1)])
case("compare_where", lambda: Fn(lambda a, b: torch.where(a > b, a, b * 2) + (a <= 0).float()),
     lambda: [r(3, 4), r(4)])
case("masked_fill", lambda: Fn(lambda a: a.masked_fill(a < 0, float("-inf")).softmax(-1)), lambda: [r(4, 6)])
case("clamp", lambda: Fn(lambda a: torch.clamp(a, -0.5, 0.7) + a.clamp(min=0.1) + a.clamp(max=-0.2)),
     lambda: [r(3, 7)])
case("max_min_elementwise", lambda: Fn(lambda a, b: torch.maximum(a, b) - torch.minimum(a, b)
                                       + torch.max(a, b)), lambda: [r(3, 4), r(3, 4, seed=1)])
case("logical", lambda: Fn(lambda a, b: torch.where((a > 0) & ~(b > 0) | (a > 1), a, b)),
     lambda: [r(4, 5), r(4, 5, seed=2)])
case("cast_int_float", lambda: Fn(lambda a, k: a * k.to(a.dtype) + (k > 3).to(a.dtype)),
     lambda: [r(2, 6), ints(7, 2, 6)])
case("inplace_methods", lambda: Fn(lambda a: a.clone().mul_(2).add_(1).relu_()), lambda: [r(3, 5)])
case("lerp_addcmul", lambda: Fn(lambda a, b: torch.lerp(a, b, 0.3) + torch.addcmul(a, a, b, value=0.5)),
     lambda: [r(3, 3), r(3, 3, seed=3)])

# --------------------------------------------------------------------------------- activations
ACTIVATIONS = {
    "relu": F.relu, "relu6": F.relu6, "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, alpha=0.7), "selu": F.selu, "celu": lambda x: F.celu(x, 1.5),
    "gelu": lambda x: F.gelu(x), "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu, "mish": F.mish,
    "softplus": lambda x: F.softplus(x), "softplus_beta": lambda x: F.softplus(x, beta=2.0, threshold=5.0),
    "softsign": F.softsign, "hardtanh": lambda x: F.hardtanh(x, -2.0, 1.5), "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish, "sigmoid": lambda x: torch.sigmoid(x), "tanh": lambda x: torch.tanh(x),
    "logsigmoid": lambda x: F.logsigmoid(x),
    "tanhshrink": F.tanhshrink, "softshrink": lambda x: F.softshrink(x), "hardshrink": lambda x: F.hardshrink(x),
    "threshold": lambda x: F.threshold(x, 0.1, -3.0),
    "rrelu_eval": lambda x: F.rrelu(x) + F.rrelu(x, 0.1, 0.5, training=False) + nn.RReLU(0.2, 0.3).eval()(x),
}
for _name, _fn in ACTIVATIONS.items():
    case(f"act_{_name}", lambda fn=_fn: Fn(fn), lambda: [r(4, 25, scale=6.0)])
case("act_modules", lambda: nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 8), nn.Mish(), nn.Tanh(),
                                          nn.LeakyReLU(0.1), nn.ELU(), nn.Hardswish(), nn.SiLU(), nn.Softplus(),
                                          nn.ReLU(inplace=True), nn.Sigmoid()),
     lambda: [r(3, 6)])
case("prelu", lambda: nn.Sequential(nn.Conv2d(3, 4, 1), nn.PReLU(4)), lambda: [r(2, 3, 3, 3)])

# ------------------------------------------------------------------------------------ linear algebra
case("linear_module", lambda: nn.Linear(7, 5), lambda: [r(2, 3, 7)])
case("linear_nobias_functional", lambda: Fn(lambda x, w: F.linear(x, w)), lambda: [r(4, 6), r(3, 6)])
case("matmul_vec_vec", lambda: Fn(lambda a, b: torch.matmul(a, b)), lambda: [r(6), r(6, seed=1)])
case("matmul_mat_vec", lambda: Fn(lambda a, b: a @ b), lambda: [r(2, 3, 6), r(6)])
case("matmul_vec_mat", lambda: Fn(lambda a, b: torch.matmul(a, b)), lambda: [r(6), r(2, 6, 4)])
case("matmul_broadcast_batch", lambda: Fn(lambda a, b: torch.matmul(a, b)), lambda: [r(2, 1, 3, 5), r(4, 5, 2)])
case("bmm_mm", lambda: Fn(lambda a, b, c: torch.bmm(a, b).sum(0) + torch.mm(c, c.t())),
     lambda: [r(3, 4, 5), r(3, 5, 4), r(4, 4)])
case("einsum_general", lambda: Fn(lambda a, b: torch.einsum("bij,bjk->bik", a, b)
                                  + torch.einsum("...ij,jk->...ik", a, b[0])), lambda: [r(2, 3, 4), r(2, 4, 3)])
case("einsum_three_and_trace", lambda: Fn(lambda a, b, c: torch.einsum("ij,jk,kl->il", a, b, c)
                                          + torch.einsum("ii", a[:, :3]) + torch.einsum("ij->", a)),
     lambda: [r(3, 4), r(4, 5), r(5, 2)])
case("addmm_baddbmm", lambda: Fn(lambda i, a, b, bb: torch.addmm(i, a, b, beta=0.5, alpha=2.0).sum()
                                 + torch.baddbmm(bb, a.unsqueeze(0), b.unsqueeze(0)).sum()),
     lambda: [r(3, 2), r(3, 4), r(4, 2), r(1, 3, 2)])
case("addbmm_sums_the_batch", lambda: Fn(lambda i, a, b: torch.addbmm(i, a, b, beta=0.5, alpha=2.0)
                                         + i.addbmm(a, b) + torch.addbmm(i, a, b, beta=0)),
     lambda: [r(3, 2), r(4, 3, 5), r(4, 5, 2)])
case("bilinear", lambda: nn.Bilinear(3, 4, 5), lambda: [r(2, 3), r(2, 4)])
case("matrix_power_cross", lambda: Fn(lambda m, a, b: (
    torch.linalg.matrix_power(m, 0), torch.matrix_power(m, 1), m.matrix_power(2), torch.linalg.matrix_power(m, 5),
    torch.linalg.cross(a, b), torch.cross(a.transpose(0, 1), b.transpose(0, 1), dim=0), a.cross(b, dim=1))),
     lambda: [r(2, 3, 3, scale=0.5), r(4, 3), r(4, 3, seed=1)])
case("outer_mv_dot", lambda: Fn(lambda a, b, m: torch.outer(a, b).sum(1) + torch.mv(m, b) + torch.dot(b, b)),
     lambda: [r(3), r(4), r(3, 4)])

# ------------------------------------------------------------------------------------------ conv
case("conv1d_stride_pad_dil", lambda: nn.Conv1d(3, 4, 3, stride=2, padding=2, dilation=2), lambda: [r(2, 3, 11)])
case("conv2d_groups", lambda: nn.Conv2d(4, 6, (3, 2), stride=(1, 2), padding=(1, 0), groups=2),
     lambda: [r(2, 4, 6, 7)])
case("conv2d_depthwise_same", lambda: nn.Conv2d(3, 6, 3, padding="same", groups=3, bias=False),
     lambda: [r(1, 3, 5, 6)])
case("conv2d_same_even_kernel", lambda: nn.Conv2d(2, 2, 4, padding="same", dilation=1), lambda: [r(1, 2, 6, 5)])
case("conv3d", lambda: nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1), lambda: [r(1, 2, 4, 5, 4)])


class PaddingModes(nn.Module):
    """Convolutions whose padding repeats the input's edge values instead of zeros."""

    def __init__(self):
        super().__init__()
        self.reflect = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect")
        self.replicate = nn.Conv2d(2, 2, (2, 3), stride=2, padding=1, padding_mode="replicate", groups=2)
        self.circular = nn.Conv1d(2, 3, 3, padding="same", dilation=2, padding_mode="circular")
        self.reflect3d = nn.Conv3d(2, 2, 2, padding=1, padding_mode="reflect", bias=False)

    def forward(self, x):
        return (self.reflect(x), self.replicate(x), self.circular(x[:, :, 0]),
                self.reflect3d(x.unsqueeze(2).expand(-1, -1, 3, -1, -1)))


case("conv_padding_modes", PaddingModes, lambda: [r(2, 2, 5, 6)])
case("unfold_im2col", lambda: Fn(lambda x: (
    F.unfold(x, 2), F.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1)), nn.Unfold(3, padding=2)(x))),
     lambda: [r(2, 3, 5, 6)])
case("conv_functional", lambda: Fn(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
     lambda: [r(1, 3, 7, 7), r(5, 3, 3, 3), r(5)])
case("conv_transpose1d", lambda: nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1, output_padding=2),
     lambda: [r(2, 3, 5)])
case("conv_transpose2d_groups_dil", lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                                               groups=2, dilation=2), lambda: [r(1, 4, 4, 3)])
case("conv_transpose2d_big_padding", lambda: nn.ConvTranspose2d(2, 3, 2, stride=2, padding=2),
     lambda: [r(1, 2, 5, 5)])


class TransposeToSize(nn.Module):
    """A transposed convolution asked for an output size (the output padding follows from it)."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)

    def forward(self, x):
        return self.up(x, output_size=[10, 9]), self.up(x, (2, 2, 9, 10))


case("conv_transpose_output_size", TransposeToSize, lambda: [r(2, 3, 5, 5)])
case("conv_transpose3d", lambda: nn.ConvTranspose3d(2, 2, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1)),
     lambda: [r(1, 2, 3, 3, 3)])

# --------------------------------------------------------------------------------------- pooling
case("max_pool1d_pad_dil", lambda: nn.MaxPool1d(3, stride=2, padding=1, dilation=2), lambda: [r(2, 3, 12)])
case("max_pool2d_ceil", lambda: nn.MaxPool2d(3, stride=2, ceil_mode=True), lambda: [r(1, 2, 8, 7)])
case("max_pool3d_functional", lambda: Fn(lambda x: F.max_pool3d(x, 2)), lambda: [r(1, 2, 4, 5, 4)])
case("lp_pool", lambda: Fn(lambda x: (
    F.lp_pool2d(x, 2, 2), nn.LPPool2d(3, (2, 3), stride=(1, 2))(x.abs()), F.lp_pool1d(x[0].abs(), 2.5, 3, stride=2),
    nn.LPPool3d(2, 2)(x.unsqueeze(0)))),
     lambda: [r(2, 3, 6, 7)])
case("max_pool_return_indices", lambda: Fn(lambda x: (
    F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)[0],
    F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)[1], F.max_pool2d(x, 2, return_indices=True)[1],
    nn.MaxPool2d(3, stride=2, ceil_mode=True, return_indices=True)(x)[1],
    F.max_pool1d(x[0], 2, dilation=2, return_indices=True)[1], F.max_pool3d(x.unsqueeze(0), 2, return_indices=True)[1])),
     lambda: [torch.cat([r(2, 3, 3, 7), torch.ones(2, 3, 4, 7)], dim=2)])
case("avg_pool1d_pad", lambda: nn.AvgPool1d(3, stride=2, padding=1), lambda: [r(2, 3, 9)])
case("avg_pool2d_exclude_pad", lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
     lambda: [r(1, 2, 7, 6)])
case("avg_pool2d_ceil_divisor", lambda: Fn(lambda x: F.avg_pool2d(x, 2, ceil_mode=True)
                                           + F.avg_pool2d(x, 2, ceil_mode=True, divisor_override=3)),
     lambda: [r(1, 2, 5, 5)])
case("avg_pool3d", lambda: nn.AvgPool3d(2), lambda: [r(1, 2, 4, 4, 6)])
case("adaptive_avg_uneven", lambda: nn.AdaptiveAvgPool2d((3, 2)), lambda: [r(2, 3, 7, 5)])
case("adaptive_avg_1d_3d", lambda: Fn(lambda a, b: F.adaptive_avg_pool1d(a, 4).sum() + F.adaptive_avg_pool3d(b, 1).sum()),
     lambda: [r(2, 3, 10), r(1, 2, 3, 4, 5)])
case("adaptive_max", lambda: nn.AdaptiveMaxPool2d((2, 3)), lambda: [r(1, 2, 5, 7)])

# ----------------------------------------------------------------------------------------- norms


def _bn(train: bool, cls=nn.BatchNorm2d, c=3):
    m = cls(c)
    with torch.no_grad():
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-1, 1)
    return m.train(train)


case("batch_norm_train", lambda: _bn(True), lambda: [r(4, 3, 3, 2)])
case("batch_norm_eval", lambda: _bn(False), lambda: [r(4, 3, 3, 2)])
case("batch_norm1d_2d_input", lambda: _bn(True, nn.BatchNorm1d, 5), lambda: [r(6, 5)])
case("layer_norm", lambda: nn.LayerNorm([4, 5]), lambda: [r(2, 3, 4, 5)])
case("layer_norm_functional_noaffine", lambda: Fn(lambda x: F.layer_norm(x, (6,), eps=1e-3)), lambda: [r(3, 6)])
case("group_norm", lambda: nn.GroupNorm(2, 6), lambda: [r(2, 6, 3, 2)])
case("local_response_norm", lambda: Fn(lambda x: (
    nn.LocalResponseNorm(3)(x), F.local_response_norm(x, 4, alpha=0.3, beta=0.6, k=2.0),
    nn.LocalResponseNorm(2, 0.5)(x[:, :, 0]), F.local_response_norm(x.unsqueeze(2), 5, 0.1))),
     lambda: [r(2, 6, 3, 4)])
case("instance_norm_affine", lambda: nn.InstanceNorm2d(3, affine=True), lambda: [r(2, 3, 4, 4)])
case("instance_norm_functional", lambda: Fn(lambda x: F.instance_norm(x)), lambda: [r(2, 3, 5)])
case("rms_norm", lambda: nn.RMSNorm(6, eps=1e-6), lambda: [r(2, 3, 6)])
case("normalize", lambda: Fn(lambda x: F.normalize(x, dim=-1) + F.normalize(x, p=1, dim=0)), lambda: [r(3, 5)])

# ------------------------------------------------------------------------------------ reductions
case("sum_mean_prod", lambda: Fn(lambda x: x.sum() + x.mean(dim=(0, 2)).sum() + x.prod(1, keepdim=True).sum()),
     lambda: [r(2, 3, 4)])
case("max_min_dim", lambda: Fn(lambda x: (x.max(dim=1).values, x.min(1, keepdim=True)[1], torch.max(x),
                                          torch.amax(x, dim=(0, 1)), torch.amin(x, 0))), lambda: [r(3, 4, 2)])
case("argmax_ties_first", lambda: Fn(lambda x: (torch.argmax(x, dim=1), torch.argmin(x, dim=0),
                                                x.argmax(), torch.argmax(x, 1, keepdim=True))),
     lambda: [torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0], [0.0, 0.0, 0.0, 0.0]])])
case("logsumexp", lambda: Fn(lambda x: torch.logsumexp(x, dim=1) + torch.logsumexp(x, (0, 1), keepdim=True).sum()),
     lambda: [r(3, 5, scale=10.0)])
case("norms", lambda: Fn(lambda x: torch.norm(x) + x.norm(p=1, dim=1).sum() + torch.linalg.vector_norm(x, 3, 0).sum()
                         + torch.linalg.norm(x, dim=1).sum() + torch.norm(x, float("inf"), dim=0).sum()),
     lambda: [r(4, 5)])
case("matrix_norms", lambda: Fn(lambda x: (
    torch.linalg.norm(x, ord=1, dim=(0, 1)), torch.linalg.norm(x, ord=float("inf"), dim=(2, 1), keepdim=True),
    torch.linalg.norm(x, dim=(-2, -1)), torch.linalg.norm(x[0], ord=-1), torch.linalg.norm(x[1], float("-inf")),
    torch.linalg.matrix_norm(x), torch.linalg.matrix_norm(x, ord=1, keepdim=True), torch.linalg.norm(x[0], "fro"),
    torch.linalg.norm(x, ord=3, dim=1), torch.norm(x, p=1, dim=(0, 1)))),
     lambda: [r(2, 3, 4)])
case("aminmax_count_nonzero", lambda: Fn(lambda x: (
    torch.aminmax(x)[0], torch.aminmax(x)[1], torch.aminmax(x, dim=1).max, x.aminmax(dim=0, keepdim=True).min,
    torch.count_nonzero(x.clamp(min=0)), torch.count_nonzero(x > 0.5, dim=1), x.count_nonzero(dim=(0, 1)))),
     lambda: [r(3, 4, 2)])
case("var_std", lambda: Fn(lambda x: (x.var(dim=1), x.std(), torch.var(x, 0, unbiased=False),
                                      x.std(dim=(0, 1), correction=0))), lambda: [r(3, 4, 2)])
case("softmax_dims", lambda: Fn(lambda x: F.softmax(x, dim=0) + F.log_softmax(x, dim=1) + nn.Softmax(dim=-1)(x)),
     lambda: [r(3, 4, 5, scale=5.0)])
case("cumsum_cumprod", lambda: Fn(lambda x: (torch.cumsum(x, 0), x.cumsum(-1), torch.cumprod(x, dim=1))),
     lambda: [r(4, 6)])
case("cumsum_1d", lambda: Fn(lambda x: torch.cumsum(x, 0)), lambda: [r(9)])
case("cummax_cummin_logcumsumexp", lambda: Fn(lambda x: (
    torch.cummax(x, 1)[0], torch.cummax(x, 1).indices, x.cummin(dim=-1)[0], x.cummin(dim=-1)[1],
    torch.logcumsumexp(x, 0), x.logcumsumexp(-1))),
     lambda: [torch.cat([r(2, 7), torch.tensor([[1.0, 3.0, 3.0, 0.5, 3.0, -2.0, -2.0]] * 2)])])

# ---------------------------------------------------------------------------------------- shapes
case("view_reshape_flatten", lambda: Fn(lambda x: (x.view(6, 4) + 1, x.reshape(2, 12), x.flatten(),
                                                   x.view(3, 2, 2, 2), torch.flatten(x, 0, 1))),
     lambda: [r(2, 3, 4)])
case("permute_transpose", lambda: Fn(lambda x: (x.permute(2, 0, 1), x.transpose(0, 2), x.mT, x[0].T,
                                                torch.movedim(x, 0, -1))), lambda: [r(2, 3, 4)])
case("squeeze_unsqueeze_expand", lambda: Fn(lambda x: (x.unsqueeze(1).expand(-1, 3, -1, -1), x.squeeze(0),
                                                       x[None].repeat(2, 1, 1, 2), x.expand_as(x))),
     lambda: [r(1, 4, 2)])
case("cat_stack", lambda: Fn(lambda a, b: (torch.cat([a, b], dim=1), torch.stack([a, a], dim=-1),
                                           torch.cat((a, a), 0))), lambda: [r(2, 3), r(2, 5)])
case("split_chunk_unbind", lambda: Fn(lambda x: (x.split(2, dim=1)[1], torch.chunk(x, 3, dim=1)[2],
                                                 x.unbind(0)[1], x.split([1, 4], dim=-1)[0])), lambda: [r(3, 5)])
case("slicing", lambda: Fn(lambda x: (x[:, 1:4:2], x[..., -1], x[1, None, :, 0], x[::2, ::-1 if False else 1],
                                      x.narrow(1, 1, 2), x.select(2, 1), x[-1])),
     lambda: [r(3, 5, 2)])
case("take_along_dim", lambda: Fn(lambda x, i, j: (
    torch.take_along_dim(x, i, dim=1), x.take_along_dim(j, 0), torch.take_along_dim(x[:1], i, 1))),
     lambda: [r(3, 5), ints(5, 3, 2), ints(3, 1, 5, seed=1)])
case("gather_index", lambda: Fn(lambda x, i: (x[i], x[:, i], x[i, 1])), lambda: [r(5, 4), ints(4, 3)])
case("flip_roll", lambda: Fn(lambda x: (x.flip(0), torch.flip(x, [0, 1]), torch.roll(x, 2, 1),
                                        torch.roll(x, (-1, 1), (0, 1)))), lambda: [r(3, 4)])
case("triu_tril_diag", lambda: Fn(lambda x, v: (torch.triu(x), torch.tril(x, -1), x.triu(1), torch.diag(v),
                                                torch.diag(v, 1), torch.diag(x), torch.diag(v, -2))),
     lambda: [r(4, 4), r(3)])
case("pad_constant_and_crop", lambda: Fn(lambda x: (F.pad(x, (1, 2)), F.pad(x, (0, 1, 2, 0), value=-1.5),
                                                    F.pad(x, (-1, 1)), nn.ZeroPad2d(1)(x))),
     lambda: [r(2, 3, 4)])
case("shuffle_rot90_diff_kron_diag_embed", lambda: Fn(lambda x, y: (
    F.channel_shuffle(x, 2), nn.ChannelShuffle(3)(x), torch.rot90(x), x.rot90(2, (1, 3)), torch.rot90(x, -1, (3, 2)),
    torch.diff(x), x.diff(n=2, dim=1), torch.diff(x, dim=0, prepend=y[:1], append=y),
    torch.kron(x[0, 0], y[0, 0]), torch.kron(y[0, 0, 0], x), torch.diag_embed(y[0, 0]),
    torch.diag_embed(x[0], offset=2), y.diag_embed(-1))),
     lambda: [r(2, 6, 3, 4), r(2, 6, 3, 4, seed=1)])
case("pad_reflect_replicate_circular", lambda: Fn(lambda x: (
    F.pad(x, (2, 1, 1, 2), mode="reflect"), F.pad(x, (0, 3), mode="replicate"),
    F.pad(x, (1, 2, 2, 0), mode="circular"), F.pad(x, (3, 3, 2, 2), mode="circular"))),
     lambda: [r(2, 3, 4)])
case("edge_pad_modules", lambda: Fn(lambda x: (
    nn.ReflectionPad2d((1, 0, 2, 1))(x), nn.ReplicationPad3d(1)(x), nn.CircularPad1d((2, 1))(x[0]),
    nn.ReflectionPad1d(3)(x[:, 0]))),
     lambda: [r(2, 3, 4, 5)])
case("interpolate_nearest", lambda: Fn(lambda x: (F.interpolate(x, scale_factor=2), nn.Upsample(size=(5, 3))(x))),
     lambda: [r(1, 2, 3, 2)])
case("embedding_module", lambda: nn.Embedding(6, 3), lambda: [ints(6, 2, 3)])
case("gathers", lambda: Fn(lambda x, i, j: (F.embedding(i, x), torch.gather(x, 1, j),
                                            x.index_select(0, i[0]), F.one_hot(i, 6).to(x.dtype))),
     lambda: [r(6, 4), ints(6, 2, 3), ints(4, 6, 2)])
case("repeat_interleave_glu", lambda: Fn(lambda x: (x.repeat_interleave(2, dim=1), torch.repeat_interleave(x, 3),
                                                    F.glu(x, 0), nn.GLU()(x))), lambda: [r(4, 6)])
case("hyperbolic_logit", lambda: Fn(lambda x: torch.sinh(x) + torch.cosh(x) + torch.asinh(x) + torch.atanh(x * 0.5)
                                    + torch.logit(torch.sigmoid(x)) + torch.exp2(x) + torch.acosh(x.abs() + 1)),
     lambda: [r(3, 4) * 0.5])
case("softmin_softmax2d", lambda: nn.Sequential(nn.Softmin(dim=1), nn.Softmax2d()), lambda: [r(2, 3, 4, 2)])
case("interpolate_linear_family", lambda: Fn(lambda a, b: (
        F.interpolate(a, size=(5, 7), mode="bilinear"), F.interpolate(a, scale_factor=2, mode="bilinear",
                                                                      align_corners=True),
        F.interpolate(b, size=9, mode="linear"), F.interpolate(a[:, :, None], size=(2, 3, 5), mode="trilinear"),
        F.interpolate(a, scale_factor=1.5, mode="bilinear"))),
     lambda: [r(1, 2, 3, 4), r(2, 1, 4)])
case("rounding", lambda: Fn(lambda x: (torch.floor(x), torch.ceil(x), torch.trunc(x), torch.frac(x), torch.round(x),
                                       x.round() * 2, torch.floor(x * 3.7), torch.round(x, decimals=2),
                                       x.round(decimals=-1))),
     lambda: [torch.cat([r(20, scale=4.0), torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0, -3.0, 0.0])])])
case("any_all_var_mean_trace", lambda: Fn(lambda x: ((x > 0).any(dim=1), torch.all(x > -1), torch.any(x > 5),
                                                       torch.var_mean(x, dim=0), torch.std_mean(x),
                                                       torch.trace(x))), lambda: [r(4, 5)])
case("pixel_shuffle", lambda: nn.Sequential(nn.PixelShuffle(2), nn.PixelUnshuffle(2), nn.PixelShuffle(2)),
     lambda: [r(1, 8, 2, 3)])
case("cdist_tensordot_logaddexp", lambda: Fn(lambda a, b: (torch.cdist(a, b), torch.cdist(a, b, p=1),
                                                           torch.tensordot(a, b, dims=([2], [2])),
                                                           torch.tensordot(a[0], b[0].T, dims=1),
                                                           torch.logaddexp(a, a * 3))),
     lambda: [r(2, 3, 4), r(2, 5, 4)])
case("creation_in_forward", lambda: Fn(lambda x: x + torch.ones(3, 4) + torch.arange(4) + torch.zeros_like(x)
                                       + x.new_full((3, 4), 2.0)), lambda: [r(3, 4)])

# ---------------------------------------------------------------------------------------- losses
case("mse_l1", lambda: Fn(lambda a, b: (F.mse_loss(a, b), F.l1_loss(a, b, reduction="sum"),
                                        nn.MSELoss(reduction="none")(a, b))), lambda: [r(3, 4), r(3, 4, seed=5)])
case("smooth_l1_huber", lambda: Fn(lambda a, b: (F.smooth_l1_loss(a, b, beta=0.5), F.huber_loss(a, b, delta=0.7),
                                                 nn.SmoothL1Loss()(a, b))), lambda: [r(4, 5), r(4, 5, seed=5)])
case("cross_entropy_indices", lambda: Fn(lambda x, t: (F.cross_entropy(x, t), F.cross_entropy(x, t, reduction="sum"),
                                                       F.cross_entropy(x, t, label_smoothing=0.1))),
     lambda: [r(6, 4), ints(4, 6)])
case("cross_entropy_ignore_index", lambda: Fn(lambda x, t: F.cross_entropy(x, t, ignore_index=2)),
     lambda: [r(6, 4), torch.tensor([0, 2, 1, 2, 3, 1])])
case("cross_entropy_probs_spatial", lambda: Fn(lambda x, p, t: (F.cross_entropy(x, p), F.cross_entropy(x, t))),
     lambda: [r(2, 3, 4), probs(2, 3, 4, dim=1), ints(3, 2, 4)])
case("nll_weighted", lambda: nn.NLLLoss(weight=torch.tensor([1.0, 2.0, 0.5])),
     lambda: [F.log_softmax(r(5, 3), 1), ints(3, 5)])
case("kl_div", lambda: Fn(lambda a, b: (F.kl_div(a, b, reduction="batchmean"), F.kl_div(a, b.log(), log_target=True),
                                        nn.KLDivLoss(reduction="sum")(a, b))),
     lambda: [F.log_softmax(r(3, 5), 1), probs(3, 5)])
case("cosine_pairwise", lambda: Fn(lambda a, b: (F.cosine_similarity(a, b), nn.CosineSimilarity(dim=0)(a, b),
                                                 F.pairwise_distance(a, b), nn.PairwiseDistance(p=1)(a, b))),
     lambda: [r(4, 6), r(4, 6, seed=4)])
case("triplet_margin", lambda: Fn(lambda a, p, n: (F.triplet_margin_loss(a, p, n), F.triplet_margin_loss(
    a, p, n, margin=0.5, swap=True, reduction="none"))), lambda: [r(5, 3), r(5, 3, seed=1), r(5, 3, seed=2)])
case("hinge_ranking_bce", lambda: Fn(lambda x, y, p, t: (F.hinge_embedding_loss(x, y), F.margin_ranking_loss(x, p, y),
                                                         F.binary_cross_entropy(torch.sigmoid(p), t),
                                                         F.binary_cross_entropy_with_logits(x, t),
                                                         F.soft_margin_loss(x, y))),
     lambda: [r(8), torch.tensor([1.0, -1, 1, 1, -1, -1, 1, -1]), r(8, seed=3), probs(8)])
case("poisson_gaussian_nll", lambda: Fn(lambda x, t, v: (
    F.poisson_nll_loss(x, t), F.poisson_nll_loss(x.abs(), t, log_input=False, full=True, reduction="sum"),
    nn.PoissonNLLLoss(full=True, reduction="none")(x, t), F.gaussian_nll_loss(x, t, v),
    F.gaussian_nll_loss(x, t, v[:, :1], full=True, reduction="sum"),
    nn.GaussianNLLLoss(eps=0.5, reduction="none")(x, t, v[:, 0]))),
     lambda: [r(4, 5), pos(4, 5, seed=1) * 2, pos(4, 5, seed=2)])
case("embedding_margin_losses", lambda: Fn(lambda a, b, y, t, m: (
    F.cosine_embedding_loss(a, b, y), nn.CosineEmbeddingLoss(margin=0.2, reduction="none")(a, b, y),
    F.multi_margin_loss(a, t), F.multi_margin_loss(a, t, p=2, margin=0.5, weight=b[0].abs(), reduction="sum"),
    F.multilabel_soft_margin_loss(a, m), F.multilabel_soft_margin_loss(a, m, weight=b[1], reduction="none"))),
     lambda: [r(4, 5), r(4, 5, seed=1), torch.tensor([1.0, -1, -1, 1]), ints(5, 4), (r(4, 5, seed=3) > 0).double()])

# ------------------------------------------------------------------------------------- attention
case("sdpa_plain_scale", lambda: Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3)),
     lambda: [r(2, 3, 4, 5), r(2, 3, 6, 5), r(2, 3, 6, 2)])
case("sdpa_causal", lambda: Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
     lambda: [r(1, 2, 5, 4), r(1, 2, 5, 4), r(1, 2, 5, 4)])
case("sdpa_masks", lambda: Fn(lambda q, k, v, m, b: (F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                                                     F.scaled_dot_product_attention(q, k, v, attn_mask=b))),
     lambda: [r(2, 4, 3), r(2, 5, 3), r(2, 5, 3), torch.tensor([[True, False, True, True, False]] * 4),
              r(4, 5)])
case("sdpa_gqa", lambda: Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True,
                                                                           is_causal=True)),
     lambda: [r(1, 4, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4)])


# ------------------------------------------------------------------------- params, consts, tracing
class ParamsAndConsts(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(4))
        self.register_buffer("offset", torch.randn(3, 1))
        self.table = torch.tensor([0.5, -1.0, 2.0, 3.0])

    def forward(self, x):
        return x * self.scale + self.offset - self.table


class ShapeBranch(nn.Module):
    """Branches on a shape: plain symbolic tracing fails, the shape-aware tracer succeeds."""

    def forward(self, x):
        if x.shape[0] > 2:
            return x.relu()
        return -x


case("params_buffers_consts", ParamsAndConsts, lambda: [r(3, 4)])
case("shape_branch_meta_tracer", ShapeBranch, lambda: [r(3, 2)])
case("returns_input_twice", lambda: Fn(lambda x: (x, x)), lambda: [r(2, 2)])
case("dropout_eval_identity", lambda: nn.Sequential(nn.Dropout(0.5), nn.Linear(3, 2)).eval(),
     lambda: [r(4, 3)])



class MHA(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=batch_first)

    def forward(self, q, kv, mask, pad):
        out, weights = self.attn(q, kv, kv, key_padding_mask=pad, attn_mask=mask)
        plain, _ = self.attn(q, q, q, need_weights=False)
        return out, weights, plain


case("mha_batch_first_masks", lambda: MHA(True).eval(),
     lambda: [r(2, 3, 8), r(2, 4, 8), torch.tensor([[False, True, False, False]] * 3),
              torch.tensor([[False, False, False, True], [False, False, False, False]])])
case("mha_seq_first", lambda: MHA(False).eval(),
     lambda: [r(3, 2, 8), r(4, 2, 8), r(3, 4), torch.zeros(2, 4, dtype=torch.bool)])


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm_cell = nn.LSTMCell(3, 4)
        self.gru_cell = nn.GRUCell(3, 4, bias=False)
        self.lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
        self.gru = nn.GRU(3, 2, bidirectional=True)

    def forward(self, x, h, c):
        h1, c1 = self.lstm_cell(x[:, 0], (h, c))
        h2 = self.gru_cell(x[:, 1], h)
        h3 = self.gru_cell(x[:, 1])
        seq, (hn, cn) = self.lstm(x)
        seq2, hn2 = self.gru(x.transpose(0, 1))
        state = (h.expand(2, -1, -1) * 0.5, c.expand(2, -1, -1) - 0.1)
        seq3, (hn3, cn3) = self.lstm(x, state)
        return h1, c1, h2, h3, seq, hn, cn, seq2, hn2, seq3, hn3, cn3


case("recurrent", Recurrent, lambda: [r(2, 3, 3), r(2, 4), r(2, 4, seed=1)])


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_pytorch(name, dtype):
    model_factory, inputs_factory = CASES[name]
    torch.manual_seed(0)
    model = model_factory()
    translate_and_run(model, inputs_factory(), dtype)


def test_argmax_picks_first_index_on_ties():
    t = translate_and_run(Fn(lambda x: torch.argmax(x, dim=1)), [torch.tensor([[1.0, 3.0, 3.0]])])
    assert t.program.signature.by_role("output")[0].dtype == "i64"


def test_cumsum_is_a_linear_recurrence():
    """O(n) prefix form: one statement reading the previous element under a guard, not a quadratic sum."""
    t = translate_and_run(Fn(lambda x: torch.cumsum(x, 1)), [r(2, 50)])
    (block,) = t.program.body.blocks
    assert [loop.extent for loop in block.loops] == [2, 50]
    ((_, stmt, _),) = list(statements(block))
    assert isinstance(stmt, Assign)
    from leir.printer import canonical

    assert "if_then_else(a-1<0,0," in canonical(stmt)


def test_default_binds_first_dimension_and_neutral_does_not():
    model = nn.Linear(4, 3)
    bound = translate_and_run(model, [r(2, 4)])
    assert all(b.loops[0].kind == "B" and b.loops[0].var == "tx" for b in bound.program.body.blocks)
    neutral = translate_and_run(model, [r(2, 4)], target_neutral=True)
    assert all(loop.kind == "L" for b in neutral.program.body.blocks for loop in b.loops)



#: Cases whose index arithmetic, guards or recurrences are the most delicate for the TVM lowering.
LLVM_CASES = [
    "conv1d_stride_pad_dil", "conv2d_groups", "conv_padding_modes", "unfold_im2col", "conv_transpose2d_groups_dil",
    "conv_transpose2d_big_padding",
    "max_pool2d_ceil", "max_pool_return_indices", "avg_pool2d_exclude_pad", "adaptive_avg_uneven", "adaptive_max", "cumsum_cumprod",
    "cummax_cummin_logcumsumexp",
    "cumsum_1d", "argmax_ties_first", "sdpa_gqa", "sdpa_masks", "gather_index", "gathers",
    "cross_entropy_ignore_index", "triu_tril_diag", "flip_roll", "view_reshape_flatten", "group_norm",
    "batch_norm_train", "logsumexp", "pad_constant_and_crop", "pad_reflect_replicate_circular",
    "shuffle_rot90_diff_kron_diag_embed", "einsum_three_and_trace", "cast_int_float",
    "mha_batch_first_masks", "interpolate_linear_family", "rounding", "recurrent",
]


def _llvm_runner(program, arrays):
    from verifier.build import build

    return build(program, "llvm").run(arrays)


@pytest.mark.parametrize("name", LLVM_CASES)
def test_operator_on_llvm_matches_pytorch(name):
    model_factory, inputs_factory = CASES[name]
    torch.manual_seed(0)
    translate_and_run(model_factory(), inputs_factory(), "f64", runner=_llvm_runner)


# ------------------------------------------------ NaN and ±inf: the translation meets PyTorch's answers

NAN_, INF_ = float("nan"), float("inf")


@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_argmax_argmin_and_max_with_dim_take_a_nan_as_the_extreme(dtype):
    """PyTorch returns the first NaN's index (the NaN propagates into the value); ties keep the first."""
    x = torch.tensor([[1.0, NAN_, 3.0, NAN_], [2.0, 5.0, 5.0, -1.0], [-INF_, INF_, 0.0, INF_]])
    translate_and_run(Fn(lambda a: (torch.argmax(a, dim=1), torch.argmin(a, dim=1), *torch.max(a, dim=1),
                                    *torch.min(a, dim=0))), [x], dtype)


@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_logsumexp_of_infinite_maxima_is_pytorchs(dtype):
    """+inf in a row gives inf, a row of -inf gives -inf (PyTorch shifts by 0 there), NaN stays NaN."""
    x = torch.tensor([[1.0, INF_, 2.0], [-INF_, -INF_, -INF_], [0.5, NAN_, 1.0], [-INF_, 0.0, 1.0]])
    t = translate_and_run(Fn(lambda a: torch.logsumexp(a, dim=1)), [x], dtype)
    assert t.program is not None


@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_sdpa_boolean_mask_adds_minus_inf_so_a_masked_nan_still_poisons_its_row(dtype):
    """PyTorch adds the boolean mask as 0/-inf: NaN (or +inf) at a masked score is NaN, not -inf."""
    q, k, v = r(1, 2, 6, 4), r(1, 2, 6, 4, seed=1), r(1, 2, 6, 4, seed=2)
    k[0, 0, 4, 1], k[0, 1, 2, 3], q[0, 1, 0, 0] = NAN_, INF_, -INF_
    mask = torch.ones(6, 6, dtype=torch.bool).tril()
    translate_and_run(Fn(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask)), [q, k, v],
                      dtype)
