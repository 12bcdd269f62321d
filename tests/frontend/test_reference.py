"""``TorchReference``: the eager source keyed by LEIR names, as the verifier uses it."""

from __future__ import annotations

import numpy as np
import pytest

from frontend.reference import TorchReference
from leir import interpreter

from .sources import LINEAR_RELU, write


@pytest.fixture()
def reference(tmp_path):
    return TorchReference(write(tmp_path, "linear_relu.py", LINEAR_RELU), {"N": 5}, "f64")


def test_params_inputs_and_outputs_agree_with_the_program(reference):
    t = reference.translation
    params = reference.params()
    assert set(params) == {d.name for d in t.program.signature.by_role("param", "const")}
    inputs = reference.inputs()
    assert list(inputs) == list(t.input_names) and inputs["A"].shape == (5, 32)
    expect = reference.outputs(inputs | params)
    got = interpreter.run(t.program, inputs | params)
    assert set(expect) == set(t.output_names)
    for name in expect:
        np.testing.assert_allclose(got[name], expect[name], rtol=1e-12, atol=1e-12)


def test_new_input_and_param_values_are_used(reference):
    t = reference.translation
    rng = np.random.default_rng(1)
    arrays = {name: rng.standard_normal(v.shape) for name, v in (reference.inputs() | reference.params()).items()}
    expect = reference.outputs(arrays)
    got = interpreter.run(t.program, arrays)
    baseline = reference.outputs(reference.inputs() | reference.params())
    for name in expect:
        np.testing.assert_allclose(got[name], expect[name], rtol=1e-12, atol=1e-12)
        assert not np.allclose(expect[name], baseline[name])


def test_time_eager_returns_one_positive_time_per_repeat(reference):
    times = reference.time_eager(reference.inputs(), repeat=3)
    assert len(times) == 3 and all(t > 0 for t in times)
