"""bf16 and fp8 models translate, export their parameters and run like PyTorch does (issue 46).

Parameters NumPy has no dtype for are exported widened to float32 — exact, and what the interpreter
stores bf16 in — so ``OUT.npz`` stays readable by plain NumPy and loads back bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn as nn

from frontend import translate_module
from frontend.loading import load_source
from frontend.reference import TorchReference
from frontend.registry import from_numpy, to_numpy
from leir import interpreter
from leir.checker import check
from leir.program import load_program
from steptp_cli.main import main

from .helpers import arrays_for, eager_outputs, translate_and_run
from .sources import LINEAR_RELU, write


def test_bf16_values_export_exactly_and_load_back():
    value = torch.randn(5, 7).to(torch.bfloat16)
    exported = to_numpy(value)
    assert exported.dtype == np.float32
    assert torch.equal(from_numpy(exported, torch.bfloat16), value)
    # the verifier hands TVM's ml_dtypes arrays over; those load too
    assert torch.equal(from_numpy(exported.astype(ml_dtypes.bfloat16), torch.bfloat16), value)


def test_translate_cli_writes_bf16_signature_and_parameters(tmp_path):
    source = write(tmp_path, "linear_relu.py", LINEAR_RELU)
    out = tmp_path / "bf.leir"
    assert main(["translate", str(source), "--dtype", "bf16", "--set", "N=4", "-o", str(out)]) == 0
    program = load_program(out.read_text())
    assert {d.dtype for d in program.signature.tensors} == {"bf16"}
    loaded = load_source(source, {"N": 4}, "bf16")
    expected = sorted(to_numpy(p).tobytes() for p in [*loaded.model.parameters(), *loaded.model.buffers()])
    with np.load(out.with_suffix(".npz")) as values:
        assert all(values[name].dtype == np.float32 for name in values.files)
        assert sorted(values[name].tobytes() for name in values.files) == expected


class _Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(24, 12)
        self.norm = nn.LayerNorm(12)

    def forward(self, x):
        return torch.softmax(self.norm(torch.relu(self.lin(x))), dim=-1)


def test_bf16_model_runs_like_pytorch_in_the_interpreter():
    torch.manual_seed(0)
    translation = translate_and_run(_Mlp(), [torch.randn(6, 24)], "bf16")
    assert {d.dtype for d in translation.program.signature.tensors} == {"bf16"}


def test_reference_runs_bf16_sources_on_ml_dtypes_arrays(tmp_path):
    source = write(tmp_path, "linear_relu.py", LINEAR_RELU)
    reference = TorchReference(source, {"N": 4}, "bf16")
    inputs = reference.inputs()
    assert all(a.dtype == np.float32 for a in inputs.values())
    as_tvm = {name: a.astype(ml_dtypes.bfloat16) for name, a in inputs.items()}
    first, second = reference.outputs(inputs), reference.outputs(as_tvm)
    assert first.keys() == second.keys()
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])


class _Fp8Linear(nn.Module):
    """A w8a8 linear: fp8 weights (a Parameter, as quantised checkpoints hold them), the input quantised
    with a dynamic per-tensor scale, dequantised products, and both scales applied to the result."""

    def __init__(self, fp8: torch.dtype):
        super().__init__()
        self.fp8 = fp8
        weight = torch.randn(12, 24)
        scale = weight.abs().amax() / torch.finfo(fp8).max
        self.weight = nn.Parameter((weight / scale).to(fp8), requires_grad=False)
        self.scale = nn.Parameter(scale, requires_grad=False)

    def forward(self, x):
        x_scale = x.abs().amax() / torch.finfo(self.fp8).max
        xq = (x / x_scale).to(self.fp8)
        return (xq.float() @ self.weight.float().t()) * (x_scale * self.scale)


@pytest.mark.parametrize(("fp8", "code"), [(torch.float8_e4m3fn, "f8e4m3"), (torch.float8_e5m2, "f8e5m2")])
def test_fp8_linear_translates_with_fp8_weights_and_matches_pytorch_exactly(fp8, code):
    torch.manual_seed(0)
    model, inputs = _Fp8Linear(fp8), [torch.randn(5, 24) * 3]
    translation = translate_module(model, inputs)
    assert check(translation.program).ok
    decls = {d.name: d for d in translation.program.signature.tensors}
    (weight,) = [n for n, d in decls.items() if d.dtype == code and d.role == "param"]
    assert np.array_equal(translation.values[weight], model.weight.float().numpy())  # exported exactly
    arrays = arrays_for(translation, inputs)
    got = interpreter.run(translation.program, arrays)
    expect = eager_outputs(model, inputs, translation)
    for name, want in expect.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=0)


def test_loading_keeps_fp8_weights_whatever_the_dtype(tmp_path):
    source = write(tmp_path, "fp8.py", FP8_SOURCE)
    loaded = load_source(source, {}, "f64")
    assert loaded.model.weight.dtype == torch.float8_e4m3fn and loaded.model.bias.dtype == torch.float64


FP8_SOURCE = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 8).to(torch.float8_e4m3fn), requires_grad=False)
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x @ self.weight.float().t() + self.bias


def get_inputs():
    return [torch.randn(2, 8)]
'''


class _Unpack(nn.Module):
    """int4 nibbles out of bytes, signed and unsigned: the masks and shifts packed weights use."""

    def forward(self, packed, signed):
        low, high = packed & 0xF, packed >> 4
        nibbles = torch.stack([low, high], dim=-1).reshape(packed.shape[0], -1)
        return nibbles, (signed >> 2) + (signed & 3), signed << 3


def test_int4_unpacking_shifts_and_masks_match_pytorch_exactly():
    packed = torch.randint(0, 256, (6, 5), dtype=torch.uint8)
    signed = torch.randint(-128, 128, (7,), dtype=torch.int8)
    model, inputs = _Unpack(), [packed, signed]
    translation = translate_module(model, inputs)
    assert check(translation.program).ok
    got = interpreter.run(translation.program, arrays_for(translation, inputs))
    for name, want in eager_outputs(model, inputs, translation).items():
        assert got[name].dtype == want.dtype and np.array_equal(got[name], want), name


def test_a_shift_by_a_tensor_is_refused_clearly():
    from frontend.errors import UnsupportedOperatorError

    class Shift(nn.Module):
        def forward(self, x, k):
            return x >> k

    with pytest.raises(UnsupportedOperatorError, match="rshift"):
        translate_module(Shift(), [torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32)])
