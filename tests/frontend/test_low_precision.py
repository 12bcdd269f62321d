"""bf16 models translate, export their parameters and run like PyTorch does in bfloat16 (issue 46).

Parameters NumPy has no dtype for are exported widened to float32 — exact, and what the interpreter
stores bf16 in — so ``OUT.npz`` stays readable by plain NumPy and loads back bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import torch
import torch.nn as nn

from frontend.loading import load_source
from frontend.reference import TorchReference
from frontend.registry import from_numpy, to_numpy
from leir.program import load_program
from steptp_cli.main import main

from .helpers import translate_and_run
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
