"""Unsupported operators and patterns are clear errors naming the operator and the user's line."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from frontend import SourceError, UnsupportedOperatorError, translate_file, translate_module
from leir.errors import LeirError

from .sources import DATA_DEPENDENT, DROPOUT_TRAINING, RANDOM_IN_FORWARD, UNSUPPORTED, UNSUPPORTED_LINE, write


def test_unsupported_operator_names_operator_line_and_alternatives(tmp_path):
    path = write(tmp_path, "bad.py", UNSUPPORTED)
    with pytest.raises(UnsupportedOperatorError) as info:
        translate_file(path)
    err = info.value
    assert isinstance(err, LeirError)
    assert err.operator == "lgamma"
    assert err.location == f"{path}:{UNSUPPORTED_LINE}"
    assert "supported:" in str(err) and "conv" in str(err) and "softmax" in str(err)


@pytest.mark.parametrize("text, needle", [
    (DATA_DEPENDENT, "item"),
    (RANDOM_IN_FORWARD, "randn_like"),
    (DROPOUT_TRAINING, "dropout"),
])
def test_patterns_without_static_meaning_are_refused(tmp_path, text, needle):
    path = write(tmp_path, "m.py", text)
    with pytest.raises(UnsupportedOperatorError) as info:
        translate_file(path)
    assert needle in str(info.value)
    assert str(path) in str(info.value)


def test_unsupported_library_module_is_named():
    class WithDecoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = nn.TransformerDecoderLayer(4, 2, dim_feedforward=8)

        def forward(self, x, memory):
            return self.decoder(x, memory)

    with pytest.raises(UnsupportedOperatorError) as info:
        translate_module(WithDecoder().eval(), [torch.randn(3, 2, 4), torch.randn(5, 2, 4)])
    assert info.value.operator == "TransformerDecoderLayer"
    assert "test_errors.py" in (info.value.location or "")


def test_file_without_model_is_a_source_error(tmp_path):
    path = write(tmp_path, "empty.py", "X = 1\n")
    with pytest.raises(SourceError):
        translate_file(path)


def test_non_tensor_results_from_tensor_values_are_refused():
    class Truthy(nn.Module):
        def forward(self, x):
            return x * x.sum().tolist()

    with pytest.raises(UnsupportedOperatorError) as info:
        translate_module(Truthy(), [torch.randn(3)])
    assert info.value.operator == "tolist"


def test_item_assignment_through_a_view_in_use_is_refused():
    """A write through a view changes its base too; LEIR tensors share no storage, so it is refused."""

    class ThroughView(nn.Module):
        def forward(self, x):
            y = x.clone()
            row = y[0]
            row[1] = 1.0
            return y, row

    class EarlierView(nn.Module):
        def forward(self, x):
            y = x.clone()
            v = y.view(-1)
            y[0] = 1.0
            return v

    for model in (ThroughView(), EarlierView()):
        with pytest.raises(UnsupportedOperatorError, match="view"):
            translate_module(model, [torch.randn(3, 2)])


def test_keyword_input_calls_translate():
    class Keywords(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4, 3))

        def forward(self, x):
            return torch.nn.functional.relu(input=torch.nn.functional.linear(input=x, weight=self.w))

    translation = translate_module(Keywords(), [torch.randn(2, 3)])
    assert translation.ops_seen == ("linear", "relu")


def test_model_that_fails_on_its_own_inputs_is_a_frontend_error():
    class Broken(nn.Module):
        def forward(self, x):
            return x @ x  # (2, 3) @ (2, 3) does not run

    with pytest.raises(LeirError, match="failed"):
        translate_module(Broken(), [torch.randn(2, 3)])


def test_rrelu_in_training_mode_is_refused():
    """Training-mode RReLU draws random slopes: refused, while eval mode translates."""
    with pytest.raises(UnsupportedOperatorError) as info:
        translate_module(nn.RReLU(), [torch.randn(3, 4)])
    assert "rrelu" in str(info.value) and "training" in str(info.value)
    translate_module(nn.RReLU().eval(), [torch.randn(3, 4)])
