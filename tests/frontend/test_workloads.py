"""Every built-in workload translates, checks, lowers, builds and runs on ``llvm``, and its outputs match
eager PyTorch (``verifier.compare``'s dtype-aware tolerance), in f32 and in f64 — the LLM kernels of level 3
in f32 and in bf16, their native inference dtype (fp8 and int4 weights keep their storage types)."""

from __future__ import annotations

import pytest

from frontend.reference import TorchReference
from leir.checker import check
from verifier.build import build
from verifier.compare import compare_outputs
from workloads.registry import list_workloads

WORKLOADS = list_workloads()


def _params():
    for info in WORKLOADS:
        # level 3 (LLM inference) at f32 and bf16, its native dtype: its kernels upcast to f32 where serving
        # kernels do (fp8 scales, routing, sampling), which an f64 model would downcast
        for dtype in ("f32", "bf16") if info.level == 3 else ("f32", "f64"):
            yield pytest.param(info, dtype, id=f"{info.id}@{dtype}")


def test_suite_is_not_empty():
    assert len(WORKLOADS) >= 100
    assert {w.level for w in WORKLOADS} == {1, 2, 3}


@pytest.mark.slow
@pytest.mark.parametrize("info, dtype", list(_params()))
def test_workload_translates_and_verifies_on_llvm(info, dtype):
    reference = TorchReference(info.path, dtype=dtype)  # translates (and checks) the very same model
    translation = reference.translation
    assert check(translation.program).ok
    arrays = reference.inputs() | reference.params()
    got = build(translation.program, "llvm").run(arrays)
    expect = reference.outputs(arrays)
    dtypes = {d.name: d.dtype for d in translation.program.signature.by_role("output")}
    results = compare_outputs(got, expect, dtypes)
    bad = {name: r for name, r in results.items() if not r.ok}
    assert not bad, {name: (r.max_abs_error, r.max_rel_error, r.mismatches) for name, r in bad.items()}
