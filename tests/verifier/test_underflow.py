"""A running product that shrinks below f32's normal range verifies against PyTorch (issue 45, item 1).

``torch.cumprod`` over rows of standard normal values reaches subnormals after a few hundred factors;
there the kernel's rounding error is absolute (half a subnormal step per product), not relative, and
the bound carries it as the underflow term ``η`` (docs/verification.md). Real TVM builds, PyTorch the
reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifier.inputs import make_inputs
from verifier.reference import TorchSourceReference
from verifier.result import Outcome
from verifier.verify import verify

CUMPROD = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumprod(x, dim=1)

ROWS = 16
LENGTH = 256

def get_inputs():
    return [torch.randn(ROWS, LENGTH)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("length", [256, 2048])
def test_a_long_cumprod_into_subnormals_passes_against_pytorch(tmp_path: Path, length: int):
    from frontend.translate import translate_file

    source = tmp_path / "cumprod.py"
    source.write_text(CUMPROD)
    sets = {"ROWS": 16, "LENGTH": length}
    translation = translate_file(source, sets=sets, dtype="f32")
    reference = TorchSourceReference(source, sets, "f32")
    result = verify(translation.program, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.tolerance == "scaled" and result.max_error_ratio <= 1.0
    # the case is the one the issue names: PyTorch's products do reach subnormals, and differ there
    (values,) = reference.outputs(make_inputs(translation.program, seed=0)).values()
    tiny = np.finfo(np.float32).tiny
    assert ((np.abs(values) < tiny) & (values != 0)).any()
    (data,) = result.outputs.values()
    assert data["error_at_worst"] < tiny  # the worst element is a subnormal one, within its bound
