"""The error bound and the comparison stay within a fixed multiple of the kernel's own buffers (issue 43).

At 128x512x1024 a broadcast logical-and ran out of the sandbox's 4 GiB in the ``bound`` stage though the
kernel needed 323 MiB: the comparison widened every output to float64 ten times over, and the scaled
allowance was one more float64 copy. Now the comparison runs ``compare.CHUNK`` elements at a time and
the allowance is computed chunk by chunk; what remains is the bound's own tensors (``bound_bytes``: 24
bytes per float element) and one batch of lanes. ``bench/bound_memory.py`` measures the full size.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

from leir.interpreter import MAX_LANES, run
from leir.program import load_program
from verifier import compare as compare_mod
from verifier.compare import ScaledAllowance, compare, scaled_allowance
from verifier.error_bound import bound_bytes, kernel_bytes
from verifier.inputs import make_inputs
from verifier.verify import verify
from verifier.verify_job import bounded_compare

#: The translation of ``torch.logical_and(x > 0.5, y > 0.5).float()`` (what the frontend emits for
#: bench/bound_memory.py's source), at 16x256x1024: 4M elements, a bool intermediate and an f32 output.
LOGICAL_AND = """input A: f32[16, 256, 1]
input C: f32[1, 256, 1024]
output G: f32[16, 256, 1024]
---
B^{16}_{tx=0}L^{256}_{a=0}L^{1}_{c=0}[D^{bool,g}_{tx,a,c}=if_then_else(A^{f32,g}_{tx,a,c}>0.5,1,0);];
B^{1}_{tx=0}L^{256}_{a=0}L^{1024}_{c=0}[E^{bool,g}_{tx,a,c}=if_then_else(C^{f32,g}_{tx,a,c}>0.5,1,0);];
B^{16}_{tx=0}L^{256}_{a=0}L^{1024}_{c=0}[F^{bool,g}_{tx,a,c}=if_then_else(D^{bool,g}_{tx,a,0}&E^{bool,g}_{0,a,c},1,0);];
B^{16}_{tx=0}L^{256}_{a=0}L^{1024}_{c=0}[G^{f32,g}_{tx,a,c}=F^{bool,g}_{tx,a,c};];
"""
#: One batch of lanes: ``MAX_LANES`` iterations, each a few dozen bytes of index and value temporaries.
LANES_BYTES = 16 * 8 * MAX_LANES


def test_bound_and_comparison_peak_within_a_fixed_multiple_of_the_kernel_buffers() -> None:
    program = load_program(LOGICAL_AND)
    arrays = make_inputs(program, seed=0)
    expected = run(program, arrays)
    outputs = {"G": expected["G"].copy()}
    outputs["G"].reshape(-1)[12345] += 1.0  # one wrong element: the comparison has work to do
    tracemalloc.start()
    try:
        comparisons = bounded_compare(program, program, outputs, expected, arrays)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    kernel = kernel_bytes(program)
    assert kernel == 16 * 256 * 4 + 256 * 1024 * 4 + 16 * 256 + 256 * 1024 + 16 * 256 * 1024 * 5
    # the bound's tensors: float64 value, magnitude and error of A, C and G, the bools as they are
    assert bound_bytes(program) <= 6 * kernel
    # everything else (comparison, allowance, lanes) is bounded by one batch of lanes, whatever the size;
    # before the chunked comparison the peak was 21.8x the kernel's buffers (here 5x + a constant)
    assert peak <= bound_bytes(program) + LANES_BYTES, (peak / 2**20, kernel / 2**20)
    result = comparisons["G"]
    assert result.method == "scaled"
    assert result.mismatches == 1 and result.first_bad_index == 12345 == result.worst_index


def _cases() -> list[tuple[np.ndarray, np.ndarray, str, Any]]:
    rng = np.random.default_rng(7)
    expected = rng.normal(size=(37, 11)).astype(np.float32)
    actual = (expected * (1 + rng.normal(size=expected.shape) * 1e-6)).astype(np.float32)
    actual.reshape(-1)[[3, 100, 200]] = (np.nan, np.nan, np.inf)  # 100: NaN on both sides, agreed
    expected.reshape(-1)[[100, 300]] = (np.nan, -np.inf)
    errors = [np.abs(rng.normal(size=expected.shape)) * 1e-7, np.abs(rng.normal(size=(11,))) * 1e-7]
    allowance = np.abs(rng.normal(size=expected.shape)) * 1e-6
    allowance.reshape(-1)[[5, 6]] = (np.inf, 0.0)
    ints = rng.integers(0, 4, size=(5, 40)).astype(np.int32)
    return [
        (actual, expected, "f32", None),
        (actual, expected, "f32", allowance),
        (actual, expected, "f32", np.abs(rng.normal(size=(1, 11))) * 1e-6),  # broadcast allowance
        (actual, expected, "f32", ScaledAllowance("f32", expected, errors)),
        (ints, np.where(ints == 3, 0, ints).astype(np.int32), "i32", None),
        (ints > 1, ints > 0, "bool", None),
    ]


@pytest.mark.parametrize("case", range(6))
def test_chunked_comparison_equals_the_one_pass_comparison(case: int, monkeypatch: pytest.MonkeyPatch) -> None:
    actual, expected, dtype, allowance = _cases()[case]
    magnitude = np.abs(expected).astype(np.float64) if dtype == "f32" else None
    whole = compare(actual, expected, dtype, allowance=allowance, magnitude=magnitude).to_json()
    assert whole["mismatches"] + whole["nonfinite_mismatches"] > 0  # something to find in every case
    for chunk in (1, 7, 64):
        monkeypatch.setattr(compare_mod, "CHUNK", chunk)
        chunked = compare(actual, expected, dtype, allowance=allowance, magnitude=magnitude).to_json()
        assert repr(chunked) == repr(whole), chunk


def test_lazy_scaled_allowance_is_the_allowance_array(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    expected = rng.normal(size=(9, 13)).astype(np.float32)
    expected[2, 3] = np.inf
    errors = [np.abs(rng.normal(size=(9, 13))), np.abs(rng.normal(size=(13,)))]
    monkeypatch.setattr(compare_mod, "CHUNK", 10)
    lazy = ScaledAllowance("f32", expected, errors)
    array = scaled_allowance("f32", expected, errors)
    assert array.tobytes() == lazy.array().tobytes() == np.concatenate([lazy.chunk(s, min(s + 10, 117))
                                                                       for s in range(0, 117, 10)]).tobytes()
    assert array[2, 3] == compare_mod.SAFETY * (errors[0][2, 3] + errors[1][3]) + 4 * 2.0**-24 * 2.0**-126


ELEMENTWISE = """input A: f32[2048, 2048]
output C: f32[2048, 2048]
---
B^{2048}_{tx=0}L^{2048}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*3+1;];
"""


def test_a_bound_that_cannot_fit_is_a_memory_limit_outcome_naming_its_size() -> None:
    program = load_program(ELEMENTWISE)
    parent = load_program(ELEMENTWISE.replace("*3+1", "*3+1.0"))
    assert bound_bytes(program) == 192 * 2**20 and kernel_bytes(program) == 32 * 2**20
    # 160 MiB: the kernel, its parent and the inputs fit; the bound's 192 MiB of tensors does not
    tight = verify(program, parent=parent, reference="parent", cache=False, memory_limit_mb=160)
    assert tight.outcome.value == "memory_limit", (tight.outcome, tight.error)
    assert "the error bound needs 192 MiB" in (tight.error or "") and "during bound" in (tight.error or "")
    roomy = verify(program, parent=parent, reference="parent", cache=False)
    assert roomy.outcome.value == "equal_pass" and roomy.tolerance == "scaled"
