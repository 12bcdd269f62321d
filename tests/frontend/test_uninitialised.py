"""``torch.empty_like`` / ``new_empty`` buffers: accepted when fully written before any read (issue 46).

The frontend proves it with the exact mask of unwritten elements (shapes and slice keys are concrete), so
a program is accepted for every input, and a read of an unwritten element is refused at its line.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from frontend import translate_module
from frontend.errors import UnsupportedOperatorError
from frontend.translate import translate_file
from leir import interpreter
from leir.checker import check

from .helpers import arrays_for, eager_outputs
from .sources import write

HALVES = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        half = x.shape[1] // 2
        out = torch.empty_like(x)
        out[:, :half] = x[:, half:] * 2
        first = out[:, :half].exp()  # reads only written elements
        out[:, half:] = first + x[:, :half]
        return out{tail}


def get_inputs():
    return [torch.randn(3, 8)]
'''


def _run(model, inputs):
    translation = translate_module(model, inputs)
    assert check(translation.program).ok
    got = interpreter.run(translation.program, arrays_for(translation, inputs))
    return got, eager_outputs(model, inputs, translation)


def test_a_fully_written_empty_like_buffer_translates_and_matches_pytorch(tmp_path):
    translation = translate_file(write(tmp_path, "halves.py", HALVES.format(tail="")))
    assert check(translation.program).ok
    x = torch.randn(3, 8)
    got = interpreter.run(translation.program, {translation.input_names[0]: x.numpy()})
    from frontend.loading import load_source

    model = load_source(tmp_path / "halves.py").model
    np.testing.assert_allclose(got[translation.output_names[0]], model(x).numpy(), rtol=1e-6)


class _RowsThenColumn(nn.Module):
    """Written by a row loop of integer keys and a column slice: coverage across several writes."""

    def forward(self, x):
        out = x.new_empty((4, 5))
        for i in range(4):
            out[i, :4] = x[i] * (i + 1)
        out[:, 4] = x.sum(1)
        return out


def test_coverage_is_tracked_through_integer_keys_and_new_empty():
    got, expect = _run(_RowsThenColumn(), [torch.randn(4, 4)])
    for name, want in expect.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5)


def test_reading_an_unwritten_element_is_refused_at_its_line(tmp_path):
    source = HALVES.format(tail="").replace("out[:, :half].exp()", "out[:, 1:half + 1].exp()")
    path = write(tmp_path, "early.py", source)
    with pytest.raises(UnsupportedOperatorError) as info:
        translate_file(path)
    line = source.splitlines().index(next(s for s in source.splitlines() if ".exp()" in s)) + 1
    message = str(info.value)
    assert "uninitialised" in message and "[0, 4]" in message  # the first unwritten element
    assert info.value.location == f"{path}:{line}"
    assert f"{path}:{line - 2}" in message  # where the buffer was made


def test_returning_unwritten_elements_is_refused(tmp_path):
    source = HALVES.format(tail="").replace("out[:, half:] = first + x[:, :half]", "pass")
    with pytest.raises(UnsupportedOperatorError, match="uninitialised memory: 12 of 24"):
        translate_file(write(tmp_path, "partial.py", source))


class _GatherKey(nn.Module):
    def forward(self, x, idx):
        out = torch.empty_like(x)
        out[idx] = x
        return out


def test_a_key_computed_from_tensor_values_is_refused():
    with pytest.raises(UnsupportedOperatorError, match="key computed from tensor values"):
        translate_module(_GatherKey(), [torch.randn(4), torch.tensor([3, 2, 1, 0])])
