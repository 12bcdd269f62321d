"""The lowering reports every loop whose kind it did not honour, and the verification record carries it."""

from __future__ import annotations

import pytest

from leir.program import load_program
from verifier.lowering import UnhonouredLoop, lower
from verifier.verify import verify

SIG = "input A: f32[4, 8]\noutput C: f32[4]\n---\n"
ELEM = "input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"


def one(text: str):
    return load_program(text)


@pytest.mark.parametrize("text, loop, reason", [
    (SIG + "L^{4}_{i=0}P^{8}_{a=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+A^{f32,g}_{i,a};];", "P^{8}_{a=0}",
     "carries a reduction"),
    (SIG + "L^{4}_{i=0}V^{8}_{a=0}[C^{f32,g}_{i}=max(C^{f32,g}_{i},A^{f32,g}_{i,a});];", "V^{8}_{a=0}",
     "carries a reduction"),
    ("input A: f32[4, 8]\noutput C: f32[4, 8]\n---\n"
     "L^{4}_{i=0}P^{8}_{a=0}[C^{f32,g}_{i,a}=if_then_else(a-1<0,0,C^{f32,g}_{i,a-1})+A^{f32,g}_{i,a};];",
     "P^{8}_{a=0}", "carries a recurrence"),
    (ELEM + "P^{4}_{i=0}P^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}*2;];", "P^{8}_{a=0}",
     "nested inside a parallel loop (LLVM runs one level)"),
    ("input A: f32[4, 8]\noutput C: f32[8]\n---\n"
     "B^{4}_{bx=0}L^{8}_{a=0}[C^{f32,g}_{a}=C^{f32,g}_{a}+A^{f32,g}_{bx,a};];", "B^{4}_{bx=0}",
     "carries a reduction"),
])
def test_a_loop_run_serially_is_reported_with_its_reason(text, loop, reason):
    lowered = lower(one(text), "llvm")
    assert lowered.unhonoured_loops == (UnhonouredLoop(loop, (0,), reason),)
    var = loop.split("_{")[1].split("=")[0]
    assert f"for {var} in range(8):" in lowered.source or f"for {var} in range(4):" in lowered.source


def test_honoured_loops_report_nothing_and_cpu_thread_axes_follow_the_mapping():
    text = ELEM + "P^{4}_{i=0}V^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}*2;];"
    lowered = lower(one(text), "llvm")
    assert lowered.unhonoured_loops == ()
    assert "T.parallel(4)" in lowered.source and "T.vectorized(8)" in lowered.source
    mapped = ELEM + "B^{4}_{tx=0}L^{8}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*2;];"
    assert lower(one(mapped), "llvm").unhonoured_loops == ()


def test_cuda_reports_p_loops_and_host_loops():
    text = ELEM + "U^{4}_{i=0}B^{8}_{tx=0}P^{1}_{a=0}[C^{f32,g}_{i,tx}=A^{f32,g}_{i,tx}*2;];"
    got = lower(one(text), "cuda").unhonoured_loops
    assert [(u.loop, u.reason) for u in got] == [
        ("U^{4}_{i=0}", "a host loop around a kernel launch runs serially"),
        ("P^{1}_{a=0}", "P runs serially inside a cuda kernel")]


def test_the_verification_record_carries_unhonoured_loops():
    text = SIG + "L^{4}_{i=0}P^{8}_{a=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+A^{f32,g}_{i,a};];"
    result = verify(one(text), cache=False)
    assert result.ok, (result.outcome, result.error)
    assert result.unhonoured_loops == [{"loop": "P^{8}_{a=0}", "path": [0], "reason": "carries a reduction"}]
    assert result.to_json()["unhonoured_loops"] == result.unhonoured_loops
    assert "unhonoured loop: P^{8}_{a=0} in block 1 runs serially: carries a reduction" in result.summary()
    clean = verify(one(ELEM + "P^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}*2;];"), cache=False)
    assert clean.unhonoured_loops == []
