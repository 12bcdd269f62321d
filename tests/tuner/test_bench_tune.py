"""``bench/tune.py``'s readings of a noisy machine: the median of its final checks, so one job that fell into a
stretch of low memory bandwidth neither sets nor is hidden from a workload's row, and a roofline from the
best of its peak readings, so a low one does not low-ball every ceiling."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

BENCH = Path(__file__).resolve().parents[2] / "bench" / "tune.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_tune", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _median_job():
    return _bench().median_job


def _jobs(*speedups):
    return [SimpleNamespace(speedup_vs_source=s, timing=None, source_timing=None, name=f"job{i}")
            for i, s in enumerate(speedups)]


def _timed_job(name: str, kernel_s: float, source_s: float):
    return SimpleNamespace(speedup_vs_source=source_s / kernel_s, timing=SimpleNamespace(median=kernel_s),
                           source_timing=SimpleNamespace(median=source_s), name=name)


def test_the_median_reading_is_chosen_whatever_the_order():
    median_job = _median_job()
    assert median_job(_jobs(8.92, 2.32, 6.07)).name == "job2"
    assert median_job(_jobs(2.32, 6.07, 8.92)).name == "job1"


def test_an_even_count_takes_the_lower_middle_and_one_job_is_itself():
    median_job = _median_job()
    assert median_job(_jobs(4.0, 1.0, 3.0, 2.0)).name == "job3"
    assert median_job(_jobs(5.0)).name == "job0"


def test_a_job_without_a_speedup_counts_as_the_slowest():
    median_job = _median_job()
    assert median_job(_jobs(None, 3.0, 0.5)).name == "job2"


def test_the_speedup_is_over_the_faster_build_of_the_source():
    bench = _bench()
    job = _timed_job("native", 0.00225, 0.237)  # the source as llvm-native built it: twice as slow
    assert bench.over_source(job, 0.119) == 0.119 / 0.00225  # llvm-host's source is the denominator
    assert bench.over_source(job, 0.300) == 0.237 / 0.00225  # unless it is the slower one
    assert bench.over_source(job, None) == job.speedup_vs_source
    # the median job is chosen by the speedup the row reports
    jobs = [_timed_job("a", 0.002, 0.300), _timed_job("b", 0.003, 0.200), _timed_job("c", 0.004, 0.100)]
    assert bench.median_job(jobs).name == "b"
    assert bench.median_job(jobs, 0.1).name == "b"  # 50x, 33x, 25x
    assert bench.median_job([_timed_job("a", 0.002, 0.300), _timed_job("b", 0.001, 0.500),
                             _timed_job("c", 0.004, 0.600)], 0.1).name == "a"  # 50x, 100x, 25x


def test_the_roofline_takes_the_best_of_each_peak_reading():
    bench = _bench()
    low = {"read_gb_s": 53.5, "gflop_s": 231.0, "threads": 2.0}
    high = {"read_gb_s": 86.8, "gflop_s": 222.0, "threads": 2.0}
    assert bench.best_peaks([low, high]) == {"read_gb_s": 86.8, "gflop_s": 231.0, "threads": 2.0}
    # a memory-bound row: 1 GB at the best bandwidth, against a 100 ms source
    row = {"compulsory_bytes": 10**9, "flops": 10**6, "source_ms": 100.0}
    bench.add_roofline(row, bench.best_peaks([low, high]))
    assert round(row["floor_ms"], 3) == round(1e3 / 86.8, 3)
    assert round(row["ceiling"], 3) == round(100.0 / (1e3 / 86.8), 3)


def test_the_unfused_source_is_timed_in_real_jobs():
    from leir.program import load_program

    bench = _bench()
    assert bench.UNFUSED_TWIN == {"llvm-native": "llvm-host"} and bench.BENCH_TARGET == "llvm-native"
    program = load_program("input A: f32[64, 256]\noutput C: f32[64]\n---\n"
                           "B^{64}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a}*2;];")
    args = SimpleNamespace(final_jobs=2, repeats=2, min_repeat_ms=1.0)
    seconds = bench.source_seconds_on(program, "llvm-host", args, None)
    assert isinstance(seconds, float) and seconds > 0
