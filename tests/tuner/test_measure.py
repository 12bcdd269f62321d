"""The measurer's verdicts on a target that fuses multiply-adds: an exact step is judged bit for bit on the
target's contraction-free twin, so a fusion LLVM contracts is kept and a real change of arithmetic is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from leir.program import load_program
from strategies import Exactness
from tuner.measure import Measurer
from tuner.policies import RulePolicy
from tuner.proposals import SearchContext
from verifier.targets import contraction_free_twin

SIGNATURE = """input A: f32[16, 1024]
param C: f32[1024]
param E: f32[1024]
output F: f32[16, 1024]
---
"""
#: x * w, then + b, in two passes: fusing them puts the product and its sum in one loop body, where
#: LLVM contracts them into one fused multiply-add on a target that has it.
SCALE_THEN_SHIFT = SIGNATURE + ("B^{16}_{tx=0}L^{1024}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*C^{f32,g}_{a};];"
                                "B^{16}_{tx=0}L^{1024}_{a=0}[F^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+E^{f32,g}_{a};];")
LEFT_SUM = SIGNATURE + "B^{16}_{tx=0}L^{1024}_{a=0}[F^{f32,g}_{tx,a}=(A^{f32,g}_{tx,a}+C^{f32,g}_{a})+E^{f32,g}_{a};];"
RIGHT_SUM = SIGNATURE + "B^{16}_{tx=0}L^{1024}_{a=0}[F^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}+(C^{f32,g}_{a}+E^{f32,g}_{a});];"


def _has_fma() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.exists() and " fma " in cpuinfo.read_text()


@pytest.fixture(scope="module")
def native():
    source = load_program(SCALE_THEN_SHIFT)
    measurer = Measurer(source, target="llvm-native", cache=False, repeats=2, min_repeat_ms=2.0)
    yield measurer
    measurer.close()


def test_the_twin_of_the_native_target_is_the_contraction_free_host_build():
    assert contraction_free_twin("llvm-native") == "llvm-host"
    assert contraction_free_twin("llvm-host") is None and contraction_free_twin("llvm") is None


def test_a_fusion_llvm_contracts_is_accepted_on_its_bitwise_equal_twin(native):
    source = load_program(SCALE_THEN_SHIFT)
    fusion = next(p.step for p in RulePolicy(seed=0, strategies=("operator_fusion",)).propose(source, SearchContext())
                  if p.step.params.get("scope") == "l")
    assert fusion.exactness is Exactness.E
    measured = native.measure(fusion.after, source, fusion.exactness)
    assert measured.accepted and measured.speedup is not None
    verification = measured.verification
    if _has_fma():  # the native build rounds the product once: within the tolerance, not bit for bit
        assert verification["outcome"] == "pass" and not verification["equal_pass"]
        assert verification["result"]["exactness_check"] == {
            "target": "llvm-host", "outcome": "equal_pass", "max_abs_error": 0.0, "error": None}
    else:
        assert verification["outcome"] == "equal_pass" and "exactness_check" not in verification["result"]


def test_an_exact_step_that_changes_the_arithmetic_stays_rejected(native):
    # reassociating a sum is not exact on any build: the twin's verdict is pass, and the step is refused
    measured = native.measure(load_program(RIGHT_SUM), load_program(LEFT_SUM), Exactness.E)
    verification = measured.verification
    assert not measured.accepted and verification["outcome"] == "pass"
    assert verification["result"]["exactness_check"]["outcome"] == "pass"
    assert verification["result"]["exactness_check"]["max_abs_error"] > 0


def test_a_numerically_equivalent_step_needs_no_second_judgement(native):
    measured = native.measure(load_program(RIGHT_SUM), load_program(LEFT_SUM), Exactness.N)
    assert measured.accepted and "exactness_check" not in measured.verification["result"]
