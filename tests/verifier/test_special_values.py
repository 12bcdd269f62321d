"""``--special-values`` with ±inf: what is fed, that kernel and interpreter agree on it, and the rule
against PyTorch where its f32 kernels and its own f64 path disagree on NaN/±inf (docs/verification.md §2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from frontend import translate_file
from leir import interpreter
from leir.program import load_program
from verifier import verify as verify_mod
from verifier.inputs import generate_tensor, make_inputs
from verifier.reference import TorchSourceReference
from verifier.result import Outcome
from verifier.sandbox import WorkerPool
from verifier.verify import verify
from verifier.verify_job import _nonfinite_by_f64
from workloads.registry import list_workloads

SOFTMAX = """input A: f32[4,32]
output P: f32[4,32]
output X: f32[4]
---
L^{4}_{i=0}L^{32}_{c=0}[X^{f32,g}_{i}=max(X^{f32,g}_{i},A^{f32,g}_{i,c});];
L^{4}_{i=0}L^{32}_{c=0}[Z^{f32,g}_{i}=Z^{f32,g}_{i}+exp(A^{f32,g}_{i,c}-X^{f32,g}_{i});];
L^{4}_{i=0}L^{32}_{c=0}[P^{f32,g}_{i,c}=exp(A^{f32,g}_{i,c}-X^{f32,g}_{i})/Z^{f32,g}_{i};];
"""


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, warm_modules=verify_mod.WARM_MODULES + ("torch",), timeout=300,
                    memory_limit_mb=4096) as workers:
        yield workers.start()


def test_float_tensors_get_nan_then_plus_and_minus_inf_as_they_grow():
    def count(size: int, **flags) -> tuple[int, int, int]:
        a = generate_tensor("A", "f32", (size,), seed=5, special_values=True, **flags)
        return int(np.isnan(a).sum()), int(np.isposinf(a).sum()), int(np.isneginf(a).sum())

    assert count(7) == (0, 0, 0) and count(8) == (1, 0, 0) and count(16) == (1, 1, 0)
    assert count(24) == (1, 1, 1) and count(4096) == (1, 1, 1)
    assert count(4096, infinities=False) == (1, 0, 0)
    log_arg = generate_tensor("L", "f32", (64,), seed=5, special_values=True, positive=True)
    assert np.isnan(log_arg).sum() == 1 and np.isposinf(log_arg).sum() == 1 and (log_arg == 0).any()
    assert not np.isinf(generate_tensor("A", "f32", (4096,), seed=5)).any()  # only when asked


def test_a_softmax_meeting_infinities_passes_kernel_against_interpreter(pool):
    program = load_program(SOFTMAX)
    arrays = make_inputs(program, seed=0, special_values=True)
    assert np.isposinf(arrays["A"]).sum() == 1 and np.isneginf(arrays["A"]).sum() == 1
    expected = interpreter.run(program, dict(arrays))
    assert np.isposinf(expected["X"]).any() and np.isnan(expected["P"]).any()  # inf wins max, inf-inf NaN
    result = verify(program, special_values=True, cache=False, pool=pool)
    assert result.outcome is Outcome.PASS and result.reference == "interpreter", result.error
    # an unshifted softmax (the same real numbers) puts its NaN only where the +inf is: a fail
    wrong = load_program(SOFTMAX.replace("P^{f32,g}_{i,c}=exp(A^{f32,g}_{i,c}-X^{f32,g}_{i})",
                                         "P^{f32,g}_{i,c}=exp(A^{f32,g}_{i,c})"))
    failed = verify(wrong, parent=program, special_values=True, reference="parent", cache=False, pool=pool)
    assert failed.outcome is Outcome.FAIL and failed.outputs["P"]["nonfinite_mismatches"] > 0


def _workload(name: str):
    (found,) = [w for w in list_workloads() if w.id == name]
    return found


def _gelu_at_inf():
    """level1/gelu in f32 on special values: (reference, arrays, PyTorch's outputs, the interpreter's
    output, where A is +inf)."""
    workload = _workload("level1/gelu")
    translation = translate_file(Path(workload.path), dtype="f32")
    reference = TorchSourceReference(workload.path, {}, "f32")
    arrays = make_inputs(translation.program, seed=0, special_values=True,
                         params={**(reference.params() or {}), **translation.values})
    expected = reference.outputs(arrays)
    (name,) = expected
    got = interpreter.run(translation.program, dict(arrays))[name]
    return reference, arrays, expected, got, np.isposinf(arrays["A"]).reshape(got.shape)


def test_pytorch_f32_gelu_at_inf_is_held_to_its_f64_path_and_nothing_else_is_excused():
    """f32 ``F.gelu(+inf)`` is NaN in PyTorch's AVX-512 kernel (inf in its AVX2 one), f64 gives inf (the
    formula's value): where they disagree, f64 decides."""
    reference, arrays, expected, got, at_inf = _gelu_at_inf()
    (name,) = expected
    assert at_inf.sum() == 1 and np.isposinf(got[at_inf]).all()
    # what the AVX-512 kernel returns there, whichever kernel this CPU ran
    expected = {name: np.where(at_inf, np.float32(np.nan), expected[name])}
    notes: list[str] = []
    fixed = _nonfinite_by_f64(reference, {name: got}, expected, arrays, notes)
    assert np.isposinf(fixed[name][at_inf]).all() and len(notes) == 1 and "1 element(s)" in notes[0]
    assert np.array_equal(np.delete(fixed[name], np.flatnonzero(at_inf)),
                          np.delete(expected[name], np.flatnonzero(at_inf)), equal_nan=True)
    # a NaN the program makes where both PyTorch paths give a number stays a difference
    broken = got.copy()
    broken.reshape(-1)[0] = np.nan
    kept = _nonfinite_by_f64(reference, {name: broken}, expected, arrays, [])
    assert np.isfinite(kept[name].reshape(-1)[0])


def test_verify_gelu_f32_with_special_values_passes_against_pytorch_with_a_note(pool):
    workload = _workload("level1/gelu")
    translation = translate_file(Path(workload.path), dtype="f32")
    result = verify(translation.program, special_values=True, reference=TorchSourceReference(workload.path),
                    params=translation.values, cache=False, pool=pool)
    assert result.outcome is Outcome.PASS, (result.error, result.outputs)
    # the note appears exactly where this CPU's PyTorch kernel gives NaN at +inf (AVX-512), not on AVX2
    _reference, _arrays, expected, _got, at_inf = _gelu_at_inf()
    pytorch_nan = bool(np.isnan(next(iter(expected.values()))[at_inf]).all())
    assert any("f64 path" in note for note in result.notes) == pytorch_nan
