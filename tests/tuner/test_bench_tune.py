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
    return [SimpleNamespace(speedup_vs_source=s, name=f"job{i}") for i, s in enumerate(speedups)]


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
