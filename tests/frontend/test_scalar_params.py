"""0-d parameters and constants (``nn.Parameter(torch.tensor(c))``, ``torch.min(x, torch.tensor(c))``)
survive the whole CLI round trip: the ``.npz`` keeps them 0-d and ``verify --source`` accepts them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from frontend.values import npz_bytes, save_npz
from leir.program import load_program
from steptp_cli.main import main

from .sources import write

SCALARS = '''\
import torch
import torch.nn as nn

N = 6


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.shift = nn.Parameter(torch.tensor(0.25))

    def forward(self, x):
        return torch.min(x, torch.tensor(0.5)) * self.shift - self.shift


def get_inputs():
    return [torch.randn(N, 5)]
'''


def test_npz_keeps_zero_dim_arrays_zero_dim(tmp_path):
    path = tmp_path / "v.npz"
    save_npz(path, {"S": np.array(1.5, dtype=np.float32), "V": np.arange(3.0)})
    with np.load(path) as data:
        assert data["S"].shape == () and float(data["S"]) == 1.5
        assert data["V"].shape == (3,)
    assert npz_bytes({"S": np.array(1.5)}) == npz_bytes({"S": np.array(1.5)})


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_zero_dim_params_translate_and_verify(tmp_path, capsys, dtype):
    source = write(tmp_path, "scalars.py", SCALARS)
    out = tmp_path / "scalars.leir"
    assert main(["translate", str(source), "--dtype", dtype, "-o", str(out)]) == 0
    program = load_program(out.read_text())
    scalars = [d.name for d in program.signature.tensors if d.role in ("param", "const") and d.shape == ()]
    assert scalars, "the 0-d parameter should stay a 0-d tensor of the signature"
    with np.load(out.with_suffix(".npz")) as data:
        assert all(data[name].shape == () for name in scalars)
    capsys.readouterr()
    code = main(["verify", str(out), "--source", str(source), "--json", "--no-cache"])
    result = json.loads(capsys.readouterr().out)
    assert (code, result["outcome"]) == (0, "pass"), result
