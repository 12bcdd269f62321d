"""Tracing details that decide which program a module becomes: unsupplied forward defaults, tracer noise."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from frontend import UnsupportedOperatorError, translate_module

from .helpers import translate_and_run


class OptionalState(nn.Module):
    """An RNN-style forward whose initial state defaults to ``None`` and is made inside forward."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.Linear(6, 6)

    def forward(self, x, h0=None, scale=2.0):
        if h0 is None:
            h0 = torch.full((6,), 0.5)
        return torch.tanh(self.cell(x) + h0) * scale


class RandomState(nn.Module):
    def forward(self, x, h0=None):
        if h0 is None:
            h0 = torch.randn(4)
        return x + h0


class ShapeBranch(nn.Module):
    """Branches on a shape, so plain symbolic tracing fails and the meta tracer takes over."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        if x.shape[-1] == 8:
            return torch.relu(self.proj(x))
        return x


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_defaults_not_supplied_by_get_inputs_are_fixed_while_tracing(dtype):
    translation = translate_and_run(OptionalState(), [torch.randn(3, 6)], dtype)
    assert list(translation.input_positions) == [0]  # neither h0 nor scale became an input


def test_random_state_made_inside_forward_is_refused_with_its_line():
    with pytest.raises(UnsupportedOperatorError) as info:
        translate_module(RandomState(), [torch.randn(2, 4)])
    assert "randn" in str(info.value) and "random" in str(info.value)
    assert info.value.location is not None and "test_tracing.py:" in info.value.location


def test_meta_tracer_fallback_is_quiet():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        translate_and_run(ShapeBranch(), [torch.randn(2, 8)], "f64")
    assert [str(w.message) for w in caught if "metadata" in str(w.message)] == []


class KeepsState(nn.Module):
    """A vanilla RNN step that stores its new hidden state on the module, as public RNN problems do."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = torch.linspace(-1.0, 1.0, 5).repeat(2, 1)
        self.step = nn.Linear(3 + 5, 5)

    def forward(self, x):
        self.hidden = torch.tanh(self.step(torch.cat((x, self.hidden), dim=1)))
        return self.hidden * 2


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_state_a_forward_stores_on_the_module_is_its_initial_value(dtype):
    model = KeepsState()
    before = model.hidden.clone()
    translate_and_run(model, [torch.randn(2, 3)], dtype)  # compared with an eager call after translating
    assert isinstance(model.hidden, torch.Tensor) and model.hidden.shape == before.shape


class CopiesIntoState(nn.Module):
    """Overwrites a state tensor in place from an input, then reads it back through the attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("hidden", torch.zeros(2, 5))
        self.register_buffer("scale", torch.full((5,), 0.5))
        self.step = nn.Linear(5, 5)

    def forward(self, x, h):
        self.hidden.copy_(h)  # h is (1, 5): broadcast over the rows
        self.scale.mul_(h[0])
        return torch.tanh(self.step(self.hidden) + x) * self.scale


class CountsCalls(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("count", torch.ones(5))

    def forward(self, x):
        self.count.add_(1.0)
        return x * self.count


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_in_place_copy_into_module_state_is_seen_by_later_reads(dtype):
    model = CopiesIntoState()
    translation = translate_and_run(model, [torch.randn(2, 5), torch.randn(1, 5)], dtype)
    assert "copy_" in translation.ops_seen


def test_in_place_update_of_state_from_no_input_is_refused_and_undone():
    model = CountsCalls()
    with pytest.raises(UnsupportedOperatorError) as info:
        translate_module(model, [torch.randn(2, 5)])
    assert "count" in str(info.value) and "in place" in str(info.value)
    assert info.value.location is not None and "test_tracing.py:" in info.value.location
    assert torch.equal(model.count, torch.ones(5))  # tracing's own run of add_ was undone


class ShapeFacts(nn.Module):
    """What neither fx tracer follows: a shape assertion and a loop over a size read from a tensor."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 4)
        self.window = 2

    def forward(self, x):
        batch, length, channels = x.shape
        assert length == self.window * 3, "input feature has wrong size"
        parts = []
        for i in range(x.size(1) // self.window):
            parts.append(self.fc(self.norm(x[:, i * self.window:(i + 1) * self.window])))
        # F.pad reaches the graph as its C binding (torch._C._nn.pad), looked up by its public name
        return torch.nn.functional.pad(torch.cat(parts, 1) + x, (1, 0))


@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_export_fallback_traces_shape_assertions_and_size_loops(dtype):
    from frontend.tracing import trace

    assert any(n.op == "call_function" for n in trace(ShapeFacts(), [torch.randn(2, 6, 4)]).graph.nodes)
    t = translate_and_run(ShapeFacts(), [torch.randn(2, 6, 4)], dtype)
    assert {"linear", "layer_norm", "pad"} <= set(t.ops_seen)


def test_a_model_no_tracer_handles_names_every_tracer_and_why():
    from frontend.tracing import TraceFailure

    class ValueBranch(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2
            return x - 1

    with pytest.raises(TraceFailure) as info:
        translate_module(ValueBranch(), [torch.randn(3)])
    message = str(info.value)
    for tracer in ("torch.fx.symbolic_trace", "the meta tracer", "torch.export"):
        assert tracer in message
    assert "TraceError" in message and "Data-dependent branching" in message  # each tracer's own reason


def test_a_data_dependent_branch_is_refused_naming_its_line():
    """Issue 46: a branch on tensor values has no static program; the refusal names the line and its text."""
    from frontend.tracing import DataDependentBranch

    class MaxBranch(nn.Module):
        def forward(self, x):
            y = x * 2
            if y.max().item() > 1.0:
                return y
            return x

    with pytest.raises(DataDependentBranch) as info:
        translate_module(MaxBranch(), [torch.randn(3)])
    assert info.value.location is not None and info.value.location.startswith(__file__)
    line = int(info.value.location.rsplit(":", 1)[1])
    with open(__file__) as handle:
        assert handle.read().splitlines()[line - 1].strip() == "if y.max().item() > 1.0:"
    assert "data-dependent Python branch `if y.max().item() > 1.0:`" in str(info.value)
    assert "torch.where" in str(info.value)


def test_a_branch_on_a_shape_is_not_a_data_dependent_branch():
    t = translate_and_run(ShapeBranch(), [torch.randn(2, 8)], "f32")
    assert "linear" in t.ops_seen
