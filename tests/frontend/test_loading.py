"""``--set`` on the assignment forms public KernelBench files use: chained, unpacking, repeated."""

from __future__ import annotations

import pytest
import torch

from frontend import SourceError
from frontend.loading import apply_sets, load_source

from .sources import write

CHAINED = '''\
import torch
import torch.nn as nn

batch_size = 64
channels = 3
height = width = 32
depth, rows, cols = 4, 16, 16
rows, cols = 20, 20  # a later rebinding: the override must win over it too


class Model(nn.Module):
    def forward(self, x, y):
        return x.sum(dim=1) + y.mean()


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(depth, rows, cols)]
'''


def shapes(tmp_path, sets):
    loaded = load_source(write(tmp_path, "chained.py", CHAINED), sets)
    return [tuple(t.shape) for t in loaded.inputs]


def test_set_overrides_one_name_of_a_chained_assignment(tmp_path):
    assert shapes(tmp_path, {"height": 5}) == [(64, 3, 5, 32), (4, 20, 20)]


def test_set_overrides_names_of_unpacking_and_later_rebinding(tmp_path):
    sets = {"batch_size": 2, "width": 6, "depth": 2, "cols": 7}
    assert shapes(tmp_path, sets) == [(2, 3, 32, 6), (2, 20, 7)]


def test_set_keeps_nested_unpacking_consistent():
    tree = apply_sets("a, (b, c) = 1, (2, 3)\nd = b + c\n", {"b": 10}, "f.py")
    env: dict = {}
    exec(compile(tree, "f.py", "exec"), env)
    assert (env["a"], env["b"], env["c"], env["d"]) == (1, 10, 3, 13)


def test_set_of_a_name_bound_only_by_attribute_is_an_error():
    with pytest.raises(SourceError, match="x is not a module-level constant"):
        apply_sets("import types\nobj = types.SimpleNamespace()\nobj.x = 1\n", {"x": 2}, "f.py")


LAYERS = '''\
import torch
import torch.nn as nn

input_size = 6
layer_sizes = [400, 800]


class Model(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        widths = [input_size, *sizes]
        self.layers = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(widths, widths[1:])])

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(2, input_size)]


def get_init_inputs():
    return [layer_sizes]
'''


def test_set_accepts_list_values(tmp_path):
    loaded = load_source(write(tmp_path, "layers.py", LAYERS), {"layer_sizes": [5, 3]})
    assert [layer.out_features for layer in loaded.model.layers] == [5, 3]
    assert loaded.init_inputs == [[5, 3]]


def test_set_refuses_a_value_that_is_no_literal(tmp_path):
    with pytest.raises(SourceError, match="not a Python literal"):
        load_source(write(tmp_path, "layers.py", LAYERS), {"layer_sizes": object()})


LITERAL_SIZES = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(3, classes)

    def forward(self, x, target, scale):
        pooled = x.mean(dim=(2, 3))
        return nn.functional.cross_entropy(self.fc(pooled), target) * scale.sum()


def get_inputs():
    target = torch.randint(0, 10, (16,)).cuda()
    return [torch.rand(16, 3, 224, 224), target, torch.ones(size=(4,))]


def get_init_inputs():
    return [10]
'''


def test_input_shape_rewrites_sizes_written_inside_get_inputs(tmp_path):
    from frontend import parse_input_shape

    path = write(tmp_path, "literal.py", LITERAL_SIZES)
    shapes = dict(parse_input_shape(t) for t in ("0=2,3,8,8", "1=(2,)", "2=[3]"))
    assert shapes == {0: (2, 3, 8, 8), 1: (2,), 2: (3,)}
    loaded = load_source(path, input_shapes=shapes)
    x, target, scale = loaded.inputs
    assert x.shape == (2, 3, 8, 8) and bool((x >= 0).all())  # still torch.rand: same distribution
    assert target.shape == (2,) and target.dtype.is_floating_point is False and int(target.max()) < 10
    assert scale.shape == (3,) and bool((scale == 1).all())


@pytest.mark.parametrize("text, needle", [("0", "INDEX=SHAPE"), ("a=2", "INDEX=SHAPE"), ("0=-1", "negative"),
                                          ("5=2", "no input 5")])
def test_bad_input_shape_is_a_source_error(tmp_path, text, needle):
    from frontend import parse_input_shape

    path = write(tmp_path, "literal.py", LITERAL_SIZES)
    with pytest.raises(SourceError, match=needle):
        load_source(path, input_shapes=dict([parse_input_shape(text)]))


WRAPPED_SIZES = '''\
import torch


class Model(torch.nn.Module):
    def forward(self, mask, x, p):
        return torch.where(mask, x, p)


def get_inputs():
    scale = torch.rand(())
    return [torch.rand(128, 512, 1) > 0.5, 2 * torch.randn(1, 512, 64), (torch.rand(1, 1, 64) * scale).softmax(-1)]
'''


def test_input_shape_finds_the_creating_call_inside_comparisons_and_arithmetic(tmp_path):
    path = write(tmp_path, "wrapped.py", WRAPPED_SIZES)
    loaded = load_source(path, input_shapes={0: (4, 8, 1), 1: (1, 8, 16), 2: (1, 1, 16)})
    mask, x, p = loaded.inputs
    assert mask.shape == (4, 8, 1) and mask.dtype == torch.bool  # still a comparison of torch.rand
    assert x.shape == (1, 8, 16) and p.shape == (1, 1, 16)
    assert abs(float(p.sum()) - 1.0) < 1e-5  # still a softmax over the last axis
