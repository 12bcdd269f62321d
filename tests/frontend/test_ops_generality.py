"""The operator families of the frontend-generality work: trigonometry (rotary embeddings built in
``forward``), scatter and in-place writes, sorting with PyTorch's tie order, sampling grids and the other
interpolation modes. Each small module is translated, checked, run (interpreter; a selection also on
llvm) and compared with eager PyTorch in f64 and f32."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from .helpers import translate_and_run
from .test_ops import Fn, ints, r

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


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_pytorch(name, dtype):
    model_factory, inputs_factory = CASES[name]
    torch.manual_seed(0)
    translate_and_run(model_factory(), inputs_factory(), dtype)


#: Cases run through the TVM llvm build as well (their guards and nested gathers are the delicate part).
LLVM_CASES = ["rotary_from_positions"]


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


_ = ints  # used by the scatter cases below
