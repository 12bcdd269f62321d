"""verifier.reuse: what a warm worker keeps between jobs gives the same results and never a stale entry."""

from __future__ import annotations

import numpy as np
import pytest

from leir.program import load_program
from verifier import reuse, verify_job
from verifier import verify as verify_mod
from verifier.inputs import make_inputs
from verifier.sandbox import WorkerPool
from verifier.verify import verify

PARENT = """input A: f64[64]
output C: f64[64]
---
B^{64}_{tx=0}[C^{f64,g}_{tx}=exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx});];
"""
# Two children of PARENT: one bitwise equal (a parallel loop), one equal within tolerance (exp(2a)).
CHILD_EQUAL = PARENT.replace("B^{64}_{tx=0}", "P^{64}_{tx=0}")
CHILD_CLOSE = PARENT.replace("exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx})", "exp(A^{f64,g}_{tx}+A^{f64,g}_{tx})")
# Another parent of CHILD_CLOSE's signature that computes something else: a stale entry would hide it.
OTHER_PARENT = PARENT.replace("exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx})", "exp(A^{f64,g}_{tx})")

#: Fields that are wall-clock measurements, different on every run whatever is reused.
_CLOCKED = ("build_seconds", "run_seconds", "time_seconds", "timing", "parent_timing", "source_timing",
            "speedup_vs_parent", "speedup_vs_source", "log_excerpt")


def _stable(result) -> dict:
    return {k: v for k, v in result.to_json().items() if k not in _CLOCKED}


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, warm_modules=verify_mod.WARM_MODULES, timeout=120, memory_limit_mb=2048) as workers:
        yield workers.start()


def _worker_stats(pool: WorkerPool) -> dict:
    job = pool.run(reuse.stats)
    assert job.ok, job.error
    return job.value


def _run(pool, child: str, parent: str, **kwargs):
    return verify(load_program(child), parent=load_program(parent), source=load_program(parent), pool=pool,
                  cache=False, **kwargs)


def test_digest_names_the_exact_inputs():
    program = load_program(PARENT)
    a0 = make_inputs(program, seed=0)
    assert reuse.arrays_digest(a0) == reuse.arrays_digest(make_inputs(program, seed=0))
    assert reuse.arrays_digest(a0) != reuse.arrays_digest(make_inputs(program, seed=1))
    assert reuse.arrays_digest(a0) != reuse.arrays_digest({"A": a0["A"].astype(np.float32)})
    assert reuse.arrays_digest(a0) != reuse.arrays_digest({"B": a0["A"]})
    assert reuse.arrays_digest(a0) != reuse.arrays_digest({"A": a0["A"].reshape(8, 8)})


def test_memo_hands_out_copies_and_evicts_least_recently_used():
    memo = reuse.Memo(size=2)
    value, hit = memo.get_or(("a",), lambda: {"x": np.arange(3.0)})
    assert not hit
    value["x"][0] = 99.0  # the caller's copy
    again, hit = memo.get_or(("a",), lambda: pytest.fail("recomputed a stored entry"))
    assert hit and again["x"][0] == 0.0
    memo.get_or(("b",), lambda: 2)
    memo.get_or(("a",), lambda: pytest.fail("a was used last and must stay"))
    memo.get_or(("c",), lambda: 3)  # evicts b, the least recently used
    assert set(memo.entries) == {("a",), ("c",)}


def test_memo_keeps_no_more_array_bytes_than_its_cap():
    memo = reuse.Memo(max_bytes=1000)
    memo.get_or(("a",), lambda: {"x": np.zeros(100)})  # 800 bytes
    memo.get_or(("b",), lambda: {"x": np.zeros(50)})  # 400 more: a goes
    assert set(memo.entries) == {("b",)}
    big, hit = memo.get_or(("c",), lambda: np.zeros(1000))  # over the cap alone: handed out, not kept
    assert not hit and big.shape == (1000,) and set(memo.entries) == {("b",)}


def test_outputs_key_misses_for_another_program_target_or_inputs():
    from verifier.build import build

    reuse.OUTPUTS.clear()
    parent, other = load_program(PARENT), load_program(OTHER_PARENT)
    kernel, other_kernel = build(parent, cache=False), build(other, cache=False)
    arrays = make_inputs(parent, seed=0)
    digest = reuse.arrays_digest(arrays)
    first = verify_job._outputs(kernel, parent, "llvm", arrays, digest)
    assert np.array_equal(verify_job._outputs(kernel, parent, "llvm", arrays, digest)["C"], first["C"])
    assert reuse.OUTPUTS.hits == 1
    # another program, another target, other inputs: computed, never served
    assert not np.array_equal(verify_job._outputs(other_kernel, other, "llvm", arrays, digest)["C"], first["C"])
    verify_job._outputs(kernel, parent, "c", arrays, digest)
    seed1 = make_inputs(parent, seed=1)
    fresh = verify_job._outputs(kernel, parent, "llvm", seed1, reuse.arrays_digest(seed1))
    assert np.array_equal(fresh["C"], kernel.run(seed1)["C"])
    assert reuse.OUTPUTS.hits == 1 and reuse.OUTPUTS.misses == 4


@pytest.mark.parametrize("child", [CHILD_EQUAL, CHILD_CLOSE])
def test_reuse_gives_the_same_result_bytes_as_recomputing(pool, child):
    baseline = _run(pool, child, PARENT, reuse=False)
    _run(pool, CHILD_EQUAL if child is CHILD_CLOSE else CHILD_CLOSE, PARENT)  # a sibling warms the memo
    before = _worker_stats(pool)
    reused = _run(pool, child, PARENT)
    after = _worker_stats(pool)
    assert after["outputs"]["hits"] > before["outputs"]["hits"]  # the parent's outputs were reused
    assert after["bounds"]["hits"] > before["bounds"]["hits"]  # and its error bound
    assert after["kernels"]["hits"] > before["kernels"]["hits"]  # and its kernel
    assert _stable(reused) == _stable(baseline)
    assert reused.outcome.value == ("equal_pass" if child is CHILD_EQUAL else "pass")


def test_timed_reuse_keeps_outcomes_and_never_serves_another_parent(pool):
    kwargs = {"time": True, "repeats": 2, "min_repeat_ms": 1.0}
    baseline = _run(pool, CHILD_CLOSE, PARENT, reuse=False, **kwargs)
    _run(pool, CHILD_EQUAL, PARENT, reuse_timings=True, **kwargs)
    reused = _run(pool, CHILD_CLOSE, PARENT, reuse_timings=True, **kwargs)
    assert _stable(reused) == _stable(baseline)
    assert reused.timed_output_ok and reused.source_timing is not None
    # the same child against a parent that computes something else: that parent's own outputs, a failure
    wrong = _run(pool, CHILD_CLOSE, OTHER_PARENT, reuse_timings=True, **kwargs)
    assert wrong.outcome.value == "fail"
    assert _stable(wrong) == _stable(_run(pool, CHILD_CLOSE, OTHER_PARENT, reuse=False, **kwargs))
    # another input seed: other inputs, recomputed, and again what the no-reuse path gives
    seeded = _run(pool, CHILD_CLOSE, PARENT, seed=3)
    assert _stable(seeded) == _stable(_run(pool, CHILD_CLOSE, PARENT, seed=3, reuse=False))
    assert _stable(seeded)["max_abs_error"] != _stable(baseline)["max_abs_error"]


def test_bitwise_equal_outputs_skip_the_error_bound_and_keep_their_outcome(pool):
    """An exact step's outputs equal to its parent's meet any bound: none is evaluated, same verdict."""
    with_bound = _run(pool, CHILD_EQUAL, PARENT, reuse=False, reference="parent")
    before = _worker_stats(pool)
    skipped = _run(pool, CHILD_EQUAL, PARENT, reuse=False, reference="parent", equal_skips_bound=True)
    after = _worker_stats(pool)
    assert with_bound.outcome.value == skipped.outcome.value == "equal_pass"
    assert with_bound.tolerance == "scaled" and not any("bound not" in n for n in with_bound.notes)
    assert skipped.max_abs_error == 0.0 and skipped.tolerance == "fixed"
    assert any("error bound not evaluated" in note for note in skipped.notes)
    assert after["bounds"] == before["bounds"]  # not even looked up
    # an inexact child still gets its bound and the scaled tolerance
    close = _run(pool, CHILD_CLOSE, PARENT, reuse=False, reference="parent", equal_skips_bound=True)
    assert close.outcome.value == "pass" and close.tolerance == "scaled"


def test_reused_timings_time_what_the_worker_lacks_together(pool):
    """With ``reuse_timings`` the parent is timed once per worker and inputs; its siblings share it."""
    kwargs = {"time": True, "repeats": 3, "min_repeat_ms": 1.0, "reuse_timings": True}
    first = _run(pool, CHILD_EQUAL, PARENT, seed=7, **kwargs)
    second = _run(pool, CHILD_CLOSE, PARENT, seed=7, **kwargs)
    assert first.parent_timing is not None and second.parent_timing is not None
    assert first.parent_timing.samples == second.parent_timing.samples  # one timing, shared
    assert first.timing.samples != second.timing.samples and len(second.timing.samples) == 3
