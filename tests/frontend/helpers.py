"""Shared helpers of the frontend tests: translate a module, run it, compare with eager PyTorch."""

from __future__ import annotations

import numpy as np
import torch

from frontend import Translation, translate_module
from frontend.registry import to_numpy
from leir import interpreter
from leir.checker import check

TOLERANCES = {"f64": (1e-9, 1e-10), "f32": (2e-4, 2e-5), "bf16": (3e-2, 1e-2)}
TORCH_DTYPES = {"f64": torch.float64, "f32": torch.float32, "bf16": torch.bfloat16}


def prepare(model: torch.nn.Module, inputs, dtype: str):
    torch_dtype = TORCH_DTYPES[dtype]
    model = model.to(torch_dtype)
    inputs = [x.to(torch_dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return model, inputs


def arrays_for(translation: Translation, inputs) -> dict[str, np.ndarray]:
    arrays = {name: to_numpy(inputs[pos])
              for name, pos in zip(translation.input_names, translation.input_positions, strict=True)}
    arrays.update(translation.values)
    return arrays


def eager_outputs(model, inputs, translation: Translation) -> dict[str, np.ndarray]:
    with torch.no_grad():
        result = model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    flat: list = []

    def collect(value):
        if isinstance(value, tuple | list):
            for v in value:
                collect(v)
        else:
            flat.append(value)

    collect(result)
    assert len(flat) == len(translation.output_names)
    return {n: to_numpy(t) for n, t in zip(translation.output_names, flat, strict=True)}


def assert_close(got: dict, expect: dict, dtype: str) -> None:
    rtol, atol = TOLERANCES[dtype]
    assert set(got) >= set(expect)
    for name, want in expect.items():
        have = np.asarray(got[name])
        assert have.shape == want.shape, (name, have.shape, want.shape)
        np.testing.assert_allclose(have.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=f"output {name}")


def translate_and_run(model: torch.nn.Module, inputs, dtype: str = "f64", *, target_neutral: bool = False,
                      runner=None) -> Translation:
    """Translate, check, execute (interpreter by default) and compare with eager PyTorch; returns it."""
    torch.manual_seed(0)
    model, inputs = prepare(model, inputs, dtype)
    translation = translate_module(model, inputs, target_neutral=target_neutral)
    info = check(translation.program)
    assert info.ok, info.errors
    arrays = arrays_for(translation, inputs)
    expect = eager_outputs(model, inputs, translation)
    got = runner(translation.program, arrays) if runner else interpreter.run(translation.program, arrays)
    assert_close(got, expect, dtype)
    return translation
