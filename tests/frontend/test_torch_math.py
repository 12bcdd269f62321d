"""``frontend.torch_math``: the worker's first use of PyTorch's threaded vector math is a checked warm-up."""

from __future__ import annotations

from pathlib import Path

import torch

from frontend import torch_math
from verifier.reference import TorchSourceReference

WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"


def test_settle_leaves_every_vector_math_function_agreeing_with_float64():
    report = torch_math.settle()
    assert set(report) == set(torch_math.VECTOR_MATH_FUNCTIONS)
    assert all(0 <= wrong <= torch_math.ATTEMPTS for wrong in report.values())
    x = torch.linspace(0.01, 0.99, torch_math.settle_elements())
    # at least the failing tensor's 8192-element chunk for every thread, whatever the thread count
    assert x.numel() >= 8192 * torch.get_num_threads() and x.numel() >= torch_math.PARALLEL_GRAIN
    for name in torch_math.VECTOR_MATH_FUNCTIONS:
        function = getattr(torch, name)
        assert torch.allclose(function(x), function(x.double()).float(), rtol=torch_math.RTOL,
                              atol=torch_math.ATOL), name


def test_settle_runs_once_per_process():
    first = torch_math.settle()
    assert torch_math.settle() is first


def test_a_torch_reference_settles_the_math_before_it_folds_constants(monkeypatch):
    calls = []
    monkeypatch.setattr(torch_math, "_report", None)
    real = torch_math.settle
    monkeypatch.setattr(torch_math, "settle", lambda: calls.append("settle") or real())
    reference = TorchSourceReference(WORKLOADS / "level1" / "parameter_and_constant.py",
                                     {"BATCH": 2, "DIM": 64})
    params = reference.params()
    assert calls == ["settle"]
    assert set(params) == {"C", "E", "G"}
    ramp = torch.arange(64, dtype=torch.float32) / 64
    assert torch.equal(torch.from_numpy(params["E"]), torch.exp(-ramp))
