"""Building a long program in parts (``verifier.split_build``) computes what the whole program does."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from frontend import translate_module
from leir import interpreter
from leir.checker import check
from verifier.build import build
from verifier.split_build import groups


class Deep(nn.Module):
    """Many top-level blocks, with cat (several blocks writing one tensor) and a reduction chain."""

    def __init__(self, depth=6):
        super().__init__()
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(6, 6), nn.LayerNorm(6), nn.GELU())
                                    for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.cat([layer(x)[:, :3], x[:, 3:]], dim=1).softmax(-1) + x
        return x, x.sum(0)


def _program():
    torch.manual_seed(0)
    x = torch.randn(4, 6, dtype=torch.float64)
    t = translate_module(Deep().double(), [x])
    arrays = {t.input_names[0]: x.numpy()}
    arrays.update(t.values)
    return t, arrays


def test_groups_cut_only_where_no_tensor_is_written_on_both_sides():
    t, _ = _program()
    program = t.program
    parts = groups(program, 5)
    assert len(parts) > 3 and sum(len(g) for g in parts) == len(program.body.blocks)
    from verifier.split_build import _written

    for k in range(1, len(parts)):
        before = set().union(*(_written(program.body.blocks[i]) for g in parts[:k] for i in g))
        after = set().union(*(_written(program.body.blocks[i]) for g in parts[k:] for i in g))
        assert not before & after


def test_split_build_matches_the_whole_build_and_the_interpreter():
    t, arrays = _program()
    whole = build(t.program, "llvm", split=0, cache=False)
    parts = build(t.program, "llvm", split=5, cache=False)
    assert len(parts.kernels) > 3 and all(check(p.program).ok for p in parts.parts)
    expected = interpreter.run(t.program, arrays)
    got_whole, got_parts = whole.run(arrays), parts.run(arrays)
    for name in t.output_names:
        np.testing.assert_allclose(got_parts[name], expected[name], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got_parts[name], got_whole[name])
    times = parts.time(arrays, repeat=2)
    assert len(times) == 2 and all(s > 0 for s in times)
