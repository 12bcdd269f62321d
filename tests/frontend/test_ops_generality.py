"""The operator families of the frontend-generality work: trigonometry (rotary embeddings built in
``forward``), scatter and in-place writes, sorting with PyTorch's tie order, sampling grids and the other
interpolation modes. Each small module is translated, checked, run (interpreter; a selection also on
llvm) and compared with eager PyTorch in f64 and f32."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from .helpers import translate_and_run
from .test_ops import Fn, r

CASES: dict[str, tuple] = {}


def case(name, model, inputs):
    CASES[name] = (model, inputs)


# ------------------------------------------------------------------------------------ trigonometry

class Rotary(nn.Module):
    """RoPE with the angle table built in forward from positions and inverse frequencies."""

    def __init__(self, dim=8, base=10000.0):
        super().__init__()
        self.dim = dim
        self.base = base

    def forward(self, q):
        seq = q.shape[-2]
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=q.dtype) / self.dim))
        t = torch.arange(seq, dtype=q.dtype)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        half = q.shape[-1] // 2
        rotated = torch.cat((-q[..., half:], q[..., :half]), dim=-1)
        return q * cos + rotated * sin


class RotaryFromPositions(nn.Module):
    """Angles from an input tensor of positions, so sin/cos run on program values, not constants."""

    def forward(self, x, positions):
        angles = positions.unsqueeze(-1) * torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=x.dtype)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = torch.cos(angles), torch.sin(angles)
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)


case("rotary_in_forward", Rotary, lambda: [r(2, 3, 5, 8)])
case("rotary_from_positions", RotaryFromPositions, lambda: [r(2, 6, 8), r(2, 6, scale=4.0)])
case("sin_cos_tan", lambda: Fn(lambda a: (torch.sin(a), a.cos(), torch.tan(a * 0.3))), lambda: [r(3, 4)])


# --------------------------------------------------------------------------------- scatter family
# every index below repeats positions, so the duplicate rules (accumulate vs last write) are exercised

def dup_index():
    return torch.tensor([[1, 0, 1, 3], [2, 2, 0, 2], [0, 0, 0, 1]])


case("scatter_last_write", lambda: Fn(lambda x, s: (x.scatter(1, dup_index(), s), torch.scatter(x, 0, dup_index() % 3, 2.5))),
     lambda: [r(3, 5), r(3, 4)])
case("scatter_add_dups", lambda: Fn(lambda x, s: (x.scatter_add(1, dup_index(), s), x.clone().scatter_add_(0, dup_index() % 3, s))),
     lambda: [r(3, 5), r(4, 6)])
case("scatter_legacy_reduce", lambda: Fn(lambda x, s: (x.scatter(1, dup_index(), s, reduce="add"),
                                                       x.scatter(1, dup_index(), s, reduce="multiply"))),
     lambda: [r(3, 5), r(3, 4)])
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        case(f"scatter_reduce_{_red}_{'incl' if _inc else 'excl'}",
             (lambda red, inc: lambda: Fn(lambda x, s: x.scatter_reduce(1, dup_index(), s, red, include_self=inc)))(_red, _inc),
             lambda: [r(3, 5), r(3, 4)])
case("index_add_copy_fill", lambda: Fn(lambda x, s: (x.index_add(0, torch.tensor([2, 0, 2, 3]), s, alpha=0.5),
                                                     x.index_copy(0, torch.tensor([3, 1, 3, 0]), s),
                                                     x.index_fill(1, torch.tensor([0, 2, 2]), -1.5),
                                                     torch.index_add(x, 1, torch.tensor([1, 1]), s[:, :2]))),
     lambda: [r(4, 3), r(4, 3)])
case("index_reduce", lambda: Fn(lambda x, s: tuple(x.index_reduce(0, torch.tensor([1, 1, 0, 1]), s, red, include_self=inc)
                                                   for red in ("prod", "mean", "amax", "amin") for inc in (True, False))),
     lambda: [r(3, 4), r(4, 4)])
case("index_put_both_ways", lambda: Fn(lambda x, v: (x.index_put((torch.tensor([0, 2, 0]),), v),
                                                     x.index_put((torch.tensor([0, 2, 0]),), v, accumulate=True),
                                                     x.clone().index_put_((torch.tensor([1, 1, -1]), torch.tensor([0, 0, 2])),
                                                                          v[:, 0], accumulate=True),
                                                     torch.index_put(x, (torch.tensor([1, 1, -1]), torch.tensor([0, 0, 2])), v[:, 1]))),
     lambda: [r(3, 4), r(3, 4)])


class ItemAssignment(nn.Module):
    """Assignments in forward: basic, strided, advanced (with duplicates), broadcast, boolean masks."""

    def forward(self, x, y, mask):
        out = x.clone()
        out[:, 0] = y
        out[1:4:2, 2:] = 7.0
        out[torch.tensor([0, 2, 0]), 1] = torch.tensor([1.0, 2.0, 3.0], dtype=x.dtype)
        out[mask] = 0
        z = torch.zeros(4, 5, dtype=x.dtype)
        z[..., -1] = y * 2
        z[torch.tensor([3, 1])] = x[0]
        z[:, torch.tensor([1, 1, 3])] += 1.0
        return out, z


case("item_assignment", ItemAssignment, lambda: [r(4, 5), r(4), r(4, 5) > 0.3])


class MaskRowAssignment(nn.Module):
    def forward(self, x, rows):
        x = x * 1.0
        x[rows] = torch.arange(3, dtype=x.dtype)  # one row value broadcast to every selected row
        x[x > 1.5] = -1.0
        return x


case("mask_row_assignment", MaskRowAssignment, lambda: [r(5, 3), torch.tensor([True, False, True, True, False])])
case("masked_scatter", lambda: Fn(lambda x, m, s: (x.masked_scatter(m, s), x.masked_scatter(m[0], s))),
     lambda: [r(3, 4), r(3, 4) > 0, r(20)])
case("slice_select_scatter", lambda: Fn(lambda x, s: (torch.slice_scatter(x, s[:, :2], 1, 1, 5, 2),
                                                      torch.select_scatter(x, s[:, 0], 1, -1))),
     lambda: [r(4, 6), r(4, 3)])


class StateRowWrite(nn.Module):
    """In-place index_copy_ and an item assignment into a working copy, then a read of the result."""

    def forward(self, table, idx, v):
        t = table.clone()
        t.index_copy_(0, idx, v)
        t[1] = t[0] * 2
        return t.sum(1)


case("index_copy_inplace", StateRowWrite, lambda: [r(4, 3), torch.tensor([2, 0, 2]), r(3, 3)])


# ------------------------------------------------------------------------------------------- sorting

def tied(*shape, seed=0):
    """Values with many ties (small integers), so the tie order is exercised."""
    return r(*shape, seed=seed).mul(1.5).round()


case("sort_stable_ties", lambda: Fn(lambda x: (torch.sort(x, dim=1, stable=True),
                                               torch.sort(x, dim=0, descending=True, stable=True),
                                               torch.argsort(x, dim=-1, descending=True, stable=True),
                                               x.sort(stable=True)[0])),
     lambda: [tied(4, 9)])
case("sort_untied", lambda: Fn(lambda x: (x.sort(), x.sort(1, True).indices, torch.msort(x), x[0, 0].sort()[0])),
     lambda: [r(3, 6)])
case("topk_untied", lambda: Fn(lambda x: (torch.topk(x, 3), x.topk(2, dim=0, largest=False), x.topk(4, dim=1))),
     lambda: [r(5, 7)])
case("order_statistics_untied", lambda: Fn(lambda x: (torch.kthvalue(x, 3, dim=1), x.kthvalue(2, 0, keepdim=True),
                                                      torch.median(x, dim=1), x.median(0, keepdim=True),
                                                      x.median())),
     lambda: [r(4, 6)])
case("order_statistic_values_with_ties", lambda: Fn(lambda x: (torch.topk(x, 4).values, x.kthvalue(5).values,
                                                              x.median(1).values, x.median())),
     lambda: [tied(3, 8)])


# ------------------------------------------------------------------------------------------ sampling

def grid(*shape, scale=1.2, seed=3):
    """Sampling positions reaching past [-1, 1], so every padding mode matters."""
    return r(*shape, seed=seed).clamp(-1.0, 1.0) * scale


for _mode in ("bilinear", "nearest"):
    for _pad in ("zeros", "border", "reflection"):
        for _align in (False, True):
            case(f"grid_sample_{_mode}_{_pad}_{'align' if _align else 'noalign'}",
                 (lambda m, p, a: lambda: Fn(lambda x, g: F.grid_sample(x, g, mode=m, padding_mode=p,
                                                                       align_corners=a)))(_mode, _pad, _align),
                 lambda: [r(2, 3, 4, 5), grid(2, 3, 6, 2)])
case("grid_sample_3d", lambda: Fn(lambda x, g: (F.grid_sample(x, g, align_corners=False),
                                                F.grid_sample(x, g, mode="nearest", padding_mode="reflection"))),
     lambda: [r(1, 2, 3, 4, 5), grid(1, 2, 3, 2, 3)])
case("affine_grid_sample", lambda: Fn(lambda x, theta: F.grid_sample(
         x, F.affine_grid(theta, [2, 3, 5, 4], align_corners=False), align_corners=False)),
     lambda: [r(2, 3, 6, 7), r(2, 2, 3, scale=0.7)])
case("affine_grid", lambda: Fn(lambda t2, t3: (F.affine_grid(t2, [2, 1, 3, 4], align_corners=True),
                                               F.affine_grid(t3, [2, 1, 2, 3, 4], align_corners=False))),
     lambda: [r(2, 2, 3), r(2, 3, 4)])
case("interpolate_bicubic", lambda: Fn(lambda x: (F.interpolate(x, scale_factor=2, mode="bicubic"),
                                                  F.interpolate(x, size=(3, 7), mode="bicubic", align_corners=True),
                                                  nn.Upsample(scale_factor=1.5, mode="bicubic")(x))),
     lambda: [r(2, 3, 4, 5)])
case("interpolate_antialias", lambda: Fn(lambda x: (F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True),
                                                    F.interpolate(x, scale_factor=0.4, mode="bicubic", antialias=True),
                                                    F.interpolate(x, size=(12, 5), mode="bilinear", antialias=True,
                                                                  align_corners=True))),
     lambda: [r(1, 2, 9, 11)])


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_pytorch(name, dtype):
    model_factory, inputs_factory = CASES[name]
    torch.manual_seed(0)
    translate_and_run(model_factory(), inputs_factory(), dtype)


#: Cases run through the TVM llvm build as well (their guards and nested gathers are the delicate part).
LLVM_CASES = ["rotary_from_positions", "scatter_last_write", "scatter_reduce_mean_excl", "index_put_both_ways",
              "item_assignment", "masked_scatter", "sort_stable_ties", "order_statistics_untied",
              "grid_sample_bilinear_reflection_noalign", "grid_sample_nearest_zeros_align", "grid_sample_3d",
              "interpolate_antialias"]


class FrozenWrite(nn.Module):
    def forward(self, x):
        z = torch.zeros(3)
        z[0] = x.sum()
        return z * 2


def test_write_into_a_tensor_fx_froze_is_refused():
    from frontend import UnsupportedOperatorError

    with pytest.raises(UnsupportedOperatorError, match="freezes"):
        translate_and_run(FrozenWrite(), [r(3)])


def _llvm_runner(program, arrays):
    from verifier.build import build

    return build(program, "llvm").run(arrays)


@pytest.mark.parametrize("name", LLVM_CASES)
def test_operator_on_llvm_matches_pytorch(name):
    model_factory, inputs_factory = CASES[name]
    torch.manual_seed(0)
    translate_and_run(model_factory(), inputs_factory(), "f64", runner=_llvm_runner)


def test_rotary_program_calls_sin_and_cos():
    from leir.printer import canonical

    t = translate_and_run(RotaryFromPositions(), [r(2, 6, 8), r(2, 6)])
    text = "".join(canonical(b) for b in t.program.body.blocks)
    assert "sin(" in text and "cos(" in text

