"""The host CPU share: jobs hold it shared, a timer holds it alone, waits are bounded and locks die with
their process. Real ``flock`` locks on a file of the test's own (two ``HostShare`` objects in one process
conflict exactly as two processes do: the locks belong to the open file)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from leir.program import load_program
from verifier import cpu_share
from verifier import verify as verify_mod
from verifier.cpu_share import HostShare
from verifier.sandbox import WorkerPool, probe_sleep
from verifier.verify import verify

PARALLEL_SUM = """input A: f32[64, 256]
output C: f32[64]
---
P^{64}_{a=0}L^{256}_{c=0}[C^{f32,g}_{a}=C^{f32,g}_{a}+A^{f32,g}_{a,c};];
"""


@pytest.fixture()
def lock(tmp_path: Path, monkeypatch) -> str:
    path = str(tmp_path / "cpu.lock")
    monkeypatch.setenv(cpu_share.LOCK_ENV, path)
    monkeypatch.setenv(cpu_share.WAIT_ENV, "20")
    return path


def _in_thread(func) -> tuple[threading.Thread, dict]:
    seen: dict = {}

    def run() -> None:
        seen.update(func())

    thread = threading.Thread(target=run)
    thread.start()
    return thread, seen


def test_a_timer_waits_for_a_running_job_then_has_the_cpus_alone(lock):
    job, timer = HostShare(lock), HostShare(lock)
    job.begin_job()
    assert job.shared

    def time_it() -> dict:
        with timer.alone() as held:
            return {"held": held, "at": time.monotonic()}

    thread, seen = _in_thread(time_it)
    time.sleep(0.4)
    assert not seen, "the timer ran while a job held the CPUs"
    released = time.monotonic()
    job.end_job()
    thread.join(10)
    assert seen["held"].alone and seen["held"].note() is None
    assert seen["at"] >= released and seen["held"].waited_s >= 0.35


def test_a_job_waits_while_a_timer_times_and_a_waiting_timer_goes_before_later_jobs(lock):
    first, timer, later = HostShare(lock), HostShare(lock), HostShare(lock)
    first.begin_job()
    events: list[str] = []

    def time_it() -> dict:
        with timer.alone():
            events.append("timing")
            time.sleep(0.3)
            events.append("timed")
        return {}

    def start_later() -> dict:
        later.begin_job()
        events.append("later job")
        later.end_job()
        return {}

    timing, _ = _in_thread(time_it)
    time.sleep(0.2)  # the timer now waits at the turnstile for the first job
    starting, _ = _in_thread(start_later)
    time.sleep(0.2)
    assert events == [], "a job that came after the waiting timer overtook it"
    first.end_job()
    timing.join(10)
    starting.join(10)
    assert events == ["timing", "timed", "later job"]


def test_a_timer_that_waited_too_long_times_anyway_and_says_so(lock, monkeypatch):
    monkeypatch.setenv(cpu_share.WAIT_ENV, "0.3")
    job, timer = HostShare(lock), HostShare(lock)
    job.begin_job()
    started = time.monotonic()
    with timer.alone() as held:
        inside = time.monotonic()
    assert not held.alone and 0.25 <= inside - started < 5
    assert "other sandbox jobs" in held.note() and "STEPTP_CPU_LOCK_WAIT" in held.note()
    job.end_job()


def test_a_job_gets_its_shared_hold_back_after_timing(lock, monkeypatch):
    job, other_timer = HostShare(lock), HostShare(lock)
    job.begin_job()
    with job.alone() as held:
        assert held.alone
    assert job.shared
    other = HostShare(lock)
    other.begin_job()  # shared holds coexist
    assert other.shared
    monkeypatch.setenv(cpu_share.WAIT_ENV, "0.2")
    with other_timer.alone() as blocked:
        assert not blocked.alone  # two jobs hold it shared now
    job.end_job()
    other.end_job()


def test_a_killed_holder_releases_the_lock(lock, monkeypatch):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({lock!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_SH)\nprint('held', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv(cpu_share.WAIT_ENV, "0.2")
        with HostShare(lock).alone() as blocked:
            assert not blocked.alone
        monkeypatch.setenv(cpu_share.WAIT_ENV, "20")
        holder.kill()
        holder.wait(10)
        with HostShare(lock).alone() as held:
            assert held.alone and held.waited_s < 5
    finally:
        holder.kill()


def test_a_sandbox_job_holds_the_cpus_shared_while_it_runs(lock):
    with WorkerPool(1, timeout=30) as pool:
        pool.start()
        thread, seen = _in_thread(lambda: {"job": pool.run(probe_sleep, 1.0)})
        time.sleep(0.3)  # the job is running now
        with HostShare(lock).alone() as held:
            pass
        thread.join(30)
        assert seen["job"].ok and held.alone
        assert held.waited_s >= 0.5, "the timer did not wait for the running job (1 s, 0.3 s of it gone)"


def test_verify_notes_a_timing_that_could_not_have_the_cpus_alone(lock, monkeypatch):
    monkeypatch.setenv(cpu_share.WAIT_ENV, "0.5")
    busy = HostShare(lock)
    busy.begin_job()  # another job on this host that does not finish
    try:
        with WorkerPool(1, warm_modules=verify_mod.WARM_MODULES, timeout=120) as pool:
            result = verify(load_program(PARALLEL_SUM), pool=pool.start(), time=True, cache=False,
                            repeats=2, min_repeat_ms=2, reference="interpreter")
    finally:
        busy.end_job()
    assert result.timing is not None
    assert any("other sandbox jobs" in note for note in result.notes), result.notes
    with WorkerPool(1, warm_modules=verify_mod.WARM_MODULES, timeout=120) as pool:
        quiet = verify(load_program(PARALLEL_SUM), pool=pool.start(), time=True, cache=False,
                       repeats=2, min_repeat_ms=2, reference="interpreter")
    assert quiet.timing is not None and not any("other sandbox jobs" in note for note in quiet.notes)


def test_an_unusable_lock_path_runs_jobs_unlocked_and_says_so_in_the_timing_note(tmp_path):
    share = HostShare(str(tmp_path / "missing-folder" / "cpu.lock"))
    share.begin_job()
    assert not share.shared and "FileNotFoundError" in share.unusable
    with share.alone() as held:
        assert not held.alone
    assert "without the host CPU lock" in held.note() and "missing-folder" in held.note()
    share.end_job()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a holder as another user")
def test_a_lock_file_another_user_created_is_held_read_only_and_still_excludes(monkeypatch):
    folder = tempfile.mkdtemp(prefix="steptp-lock-")
    os.chmod(folder, 0o777)
    path = os.path.join(folder, "cpu.lock")
    for name in (path, path + ".gate"):
        os.close(os.open(name, os.O_RDWR | os.O_CREAT, 0o644))  # root's files, not writable by nobody
    root = str(Path(cpu_share.__file__).resolve().parents[1])
    # the system interpreter: nobody cannot read a Python under /root; the module needs only the stdlib
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    holder = subprocess.Popen(
        [python, "-c", (
            f"import sys, time; sys.path.insert(0, {root!r})\n"
            "from verifier.cpu_share import HostShare\n"
            f"share = HostShare({path!r}); share.begin_job()\n"
            "print(share.shared, share.unusable, flush=True); time.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True, user="nobody", env={"PATH": os.environ.get("PATH", "")})
    try:
        assert holder.stdout.readline().split() == ["True", "None"]
        monkeypatch.setenv(cpu_share.WAIT_ENV, "0.2")
        with HostShare(path).alone() as held:
            assert not held.alone and held.unusable is None
    finally:
        holder.kill()
        holder.wait(10)
