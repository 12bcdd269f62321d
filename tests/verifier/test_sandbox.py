"""The sandbox: crashes, hangs and memory blow-ups become recorded outcomes and the pool keeps working.

The first group uses plain Python jobs (the sandbox's probes) to pin down the mechanics; the second group
does the same with real LEIR programs built by TVM, where the failures come from generated code.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest

from verifier.sandbox import (
    JobStatus,
    WorkerPool,
    oom_kill_count,
    probe_allocate,
    probe_close_pipe,
    probe_exit,
    probe_pid,
    probe_segfault,
    probe_send_garbage,
    probe_sleep,
    probe_tvm_threads,
    run_isolated,
)


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, timeout=20, memory_limit_mb=512) as workers:
        yield workers


def test_jobs_reuse_a_warm_worker(pool: WorkerPool):
    first = pool.run(probe_pid)
    second = pool.run(probe_pid)
    assert first.ok and second.ok
    assert first.value == second.value == first.worker_pid
    assert second.worker_jobs_before == first.worker_jobs_before + 1


def test_job_exception_is_an_error_and_the_worker_survives(pool: WorkerPool):
    before = pool.run(probe_pid).value
    result = pool.run(int, "not a number")
    assert result.status is JobStatus.ERROR
    assert result.error_type == "ValueError" and "not a number" in result.error
    assert pool.run(probe_pid).value == before


def test_segfault_is_a_crash_with_the_signal_named(pool: WorkerPool):
    before = pool.run(probe_pid).value
    started = pool.started
    result = pool.run(probe_segfault)
    assert result.status is JobStatus.CRASH
    assert result.signal == "SIGSEGV"
    assert "Segmentation fault" in result.log  # faulthandler's report, read back from the dead worker
    # a replacement starts in the background without waiting for the next job
    deadline = time.monotonic() + 60
    while pool.started == started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.started == started + 1
    after = pool.run(probe_pid)
    assert after.ok and after.value != before and after.worker_jobs_before == 0


def test_hang_is_killed_at_the_wall_limit(pool: WorkerPool):
    result = pool.run(probe_sleep, 60.0, timeout=1.0)
    assert result.status is JobStatus.TIMEOUT
    assert "1s" in result.error
    assert result.seconds < 30
    assert pool.run(probe_pid).ok


def test_oversized_allocation_hits_the_memory_limit(pool: WorkerPool):
    result = pool.run(probe_allocate, 16 * 2**30)
    assert result.status is JobStatus.MEMORY_LIMIT
    assert "512 MiB" in result.error
    small = pool.run(probe_allocate, 64 * 2**20)
    assert small.ok and small.value == 1


def test_memory_limit_is_per_job_and_can_be_lifted(pool: WorkerPool):
    assert pool.run(probe_allocate, 256 * 2**20, memory_limit_mb=128).status is JobStatus.MEMORY_LIMIT
    assert pool.run(probe_allocate, 768 * 2**20, memory_limit_mb=None).ok


def _kill_soon(pid: int, seconds: float = 1.0, sig: int = signal.SIGKILL) -> threading.Thread:
    """Send ``sig`` to ``pid`` from outside after ``seconds`` (what the kernel's OOM killer does)."""
    def kill() -> None:
        time.sleep(seconds)
        os.kill(pid, sig)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_worker_killed_from_outside_mid_job_is_a_crash_with_sigkill_named(pool: WorkerPool):
    pid = pool.run(probe_pid).value
    killer = _kill_soon(pid)
    result = pool.run(probe_sleep, 30.0)
    killer.join()
    # the OOM killer's SIGKILL is memory_limit when the cgroup counter moved; nobody ran out of memory here
    assert result.status is JobStatus.CRASH
    assert result.signal == "SIGKILL" and "SIGKILL" in result.error
    assert result.seconds < 20
    after = pool.run(probe_pid)
    assert after.ok and after.value != pid


def test_worker_exiting_without_a_reply_is_a_crash(pool: WorkerPool):
    result = pool.run(probe_exit, 7)
    assert result.status is JobStatus.CRASH
    assert result.exitcode == 7 and "without replying" in result.error
    assert pool.run(probe_pid).ok


def test_pipe_closed_early_by_a_live_worker_is_a_crash_not_an_eof(pool: WorkerPool):
    pid = pool.run(probe_pid).value
    result = pool.run(probe_close_pipe, 60.0)
    assert result.status is JobStatus.CRASH
    assert "closed its pipe" in result.error
    assert result.seconds < 20  # found out at once, not at the wall limit
    after = pool.run(probe_pid)
    assert after.ok and after.value != pid  # the half-dead worker was killed and replaced


def test_unreadable_reply_is_a_crash_not_an_exception(pool: WorkerPool):
    # an empty message is what a reply cut short by a dying writer unpickles as: "Ran out of input"
    result = pool.run(probe_send_garbage, b"")
    assert result.status is JobStatus.CRASH
    assert "could not be read" in result.error and "Ran out of input" in result.error
    assert pool.run(probe_pid).ok and pool.run(probe_pid).value == pool.run(probe_pid).value


def test_unpicklable_job_is_an_error_and_the_worker_stays(pool: WorkerPool):
    before = pool.run(probe_pid).value
    result = pool.run(probe_sleep, threading.Lock())
    assert result.status is JobStatus.ERROR and "could not be sent" in result.error
    assert pool.run(probe_pid).value == before


def test_worker_that_dies_while_starting_is_an_outcome(tmp_path, monkeypatch):
    (tmp_path / "steptp_test_dies_on_import.py").write_text("import os\nos._exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with WorkerPool(1, warm_modules=("steptp_test_dies_on_import",), startup_timeout=60,
                    replace_dead=False) as workers:
        result = workers.run(probe_pid)
        assert result.status is JobStatus.CRASH
        assert "died while starting" in result.error and result.exitcode == 3
        assert workers.run(probe_pid).status is JobStatus.CRASH  # and again: never an exception


def test_oom_kill_counter_reads_where_the_kernel_offers_it():
    count = oom_kill_count()
    assert count is None or (isinstance(count, int) and count >= 0)


def test_concurrent_callers_share_a_bounded_pool():
    with WorkerPool(2, timeout=20) as workers:
        results = []
        lock = threading.Lock()

        def call():
            outcome = workers.run(probe_sleep, 0.2)
            with lock:
                results.append(outcome)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [r.status for r in results] == [JobStatus.OK] * 6
        assert len({r.worker_pid for r in results}) <= 2
        assert workers.started == 2


def test_isolated_run_and_fork_refused():
    assert run_isolated(probe_pid).ok
    with pytest.raises(ValueError):
        WorkerPool(1, start_method="fork")


# ------------------------------------------------------------------------- real LEIR programs under TVM

# A gather whose index tensor the checker cannot bound; we hand it an index far outside A.
SEGFAULT_LEIR = """input A: f64[4]
input I: i64[4]
output C: f64[4]
---
B^{4}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{I^{i64,g}_{tx}};];
"""
# 2 x 10^12 multiply-adds: hours of work, far beyond any wall limit.
HANG_LEIR = """input A: f64[2]
output C: f64[2]
---
B^{2}_{tx=0}L^{1000000}_{a=0}L^{1000000}_{c=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx}*1.0000001;];
"""
# An intermediate E of 46000 x 46000 f64 = 16.9 GB, under a 1 GiB budget.
OOM_LEIR = """input A: f64[2]
output C: f64[2]
---
B^{46000}_{tx=0}L^{46000}_{a=0}[E^{f64,g}_{tx,a}=A^{f64,g}_{0}*2;];B^{2}_{tx=0}[C^{f64,g}_{tx}=E^{f64,g}_{tx,tx};];
"""


@pytest.fixture(scope="module")
def tvm_pool():
    with WorkerPool(1, warm_modules=("verifier.build",), timeout=60, memory_limit_mb=1024) as workers:
        yield workers.start()


def test_kernels_in_a_worker_run_on_every_usable_core(tvm_pool: WorkerPool):
    """TVM's own default is half the logical CPUs on x86-64, one thread on a 2-core VM."""
    threads = tvm_pool.run(probe_tvm_threads)
    assert threads.ok
    assert threads.value == int(os.environ.get("TVM_NUM_THREADS") or len(os.sched_getaffinity(0)))


def _verify_leir(text: str, pool: WorkerPool, **kwargs):
    from leir.program import load_program
    from verifier.verify import verify

    return verify(load_program(text), pool=pool, cache=False, reference="none", **kwargs)


def _pool_still_verifies(pool: WorkerPool) -> None:
    import numpy as np

    from verifier.result import Outcome

    ok = _verify_leir(SEGFAULT_LEIR, pool, params={"I": np.array([3, 2, 1, 0])})
    assert ok.outcome is Outcome.EXECUTE


def test_leir_gather_out_of_bounds_segfaults_into_a_crash_outcome(tvm_pool: WorkerPool):
    import numpy as np

    from verifier.result import Outcome

    result = _verify_leir(SEGFAULT_LEIR, tvm_pool, params={"I": np.array([0, 1, 10**12, 3], dtype=np.int64)})
    assert result.outcome is Outcome.CRASH
    assert "SIGSEGV" in result.error and "during run" in result.error
    assert re.search("segmentation fault|segfault", result.log_excerpt, re.IGNORECASE)  # a handler's report
    _pool_still_verifies(tvm_pool)


def test_leir_huge_loop_hits_the_wall_limit(tvm_pool: WorkerPool):
    from verifier.result import Outcome

    result = _verify_leir(HANG_LEIR, tvm_pool, timeout=10)
    assert result.outcome is Outcome.TIMEOUT
    assert "10s" in result.error and "during run" in result.error
    _pool_still_verifies(tvm_pool)


def test_leir_huge_intermediate_hits_the_memory_limit(tvm_pool: WorkerPool):
    from verifier.result import Outcome

    result = _verify_leir(OOM_LEIR, tvm_pool)
    assert result.outcome is Outcome.MEMORY_LIMIT
    assert "1024 MiB" in result.error
    _pool_still_verifies(tvm_pool)


def test_leir_worker_killed_mid_run_is_a_crash_outcome_and_verification_carries_on(tvm_pool: WorkerPool):
    from verifier.result import Outcome

    pid = tvm_pool.run(probe_pid).value
    killer = _kill_soon(pid, seconds=3.0)
    result = _verify_leir(HANG_LEIR, tvm_pool, timeout=60)
    killer.join()
    assert result.outcome is Outcome.CRASH
    assert "SIGKILL" in result.error
    _pool_still_verifies(tvm_pool)


def test_verify_does_not_cache_a_worker_that_never_started(tmp_path, monkeypatch):
    """A start failure judges the environment, not the program: the next verify must run for real."""
    from leir.program import load_program
    from verifier.cache import ResultCache
    from verifier.verify import verify

    (tmp_path / "steptp_test_dies_on_import.py").write_text("import os\nos._exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    program = load_program("input A: f32[4]\noutput C: f32[4]\n---\n"
                           "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i}+1;];")
    cache = ResultCache(tmp_path / "cache")
    with WorkerPool(1, warm_modules=("steptp_test_dies_on_import",), startup_timeout=60,
                    replace_dead=False) as broken:
        failed = verify(program, cache=cache, pool=broken)
    assert failed.outcome.value == "crash" and "no sandbox worker" in (failed.error or "")
    assert len(cache) == 0
    with WorkerPool(1) as working:
        again = verify(program, cache=cache, pool=working)
    assert again.outcome.value == "pass" and not again.cache_hit
    assert len(cache) == 1
