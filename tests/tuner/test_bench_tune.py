"""``bench/tune.py``'s readings of a noisy machine: the median of its final checks, so one job that fell into a
stretch of low memory bandwidth neither sets nor is hidden from a workload's row, and a roofline from the
best of its peak readings, so a low one does not low-ball every ceiling."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

MIB = 2**20
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
    low = {"read_gb_s": 53.5, "read_gb_s_at": {256 * MIB: 53.5}, "gflop_s": 231.0, "threads": 2.0}
    high = {"read_gb_s": 86.8, "read_gb_s_at": {256 * MIB: 86.8}, "gflop_s": 222.0, "threads": 2.0}
    assert bench.best_peaks([low, high]) == {"read_gb_s": 86.8, "read_gb_s_at": {256 * MIB: 86.8},
                                             "gflop_s": 231.0, "threads": 2.0}
    # a memory-bound row: 1 GB at the best bandwidth, against a 100 ms source
    row = {"compulsory_bytes": 10**9, "flops": 10**6, "source_ms": 100.0}
    bench.add_roofline(row, bench.best_peaks([low, high]))
    assert round(row["floor_ms"], 3) == round(1e3 / 86.8, 3)
    assert round(row["ceiling"], 3) == round(100.0 / (1e3 / 86.8), 3)


#: A ladder like one run's: caches read far faster than DRAM's 256 MiB reading.
LADDER_LOW = {MIB: 110.0, 4 * MIB: 95.0, 16 * MIB: 70.0, 64 * MIB: 35.0, 256 * MIB: 32.0}
LADDER_HIGH = {MIB: 100.0, 4 * MIB: 120.0, 16 * MIB: 60.0, 64 * MIB: 40.0, 256 * MIB: 31.0}


def test_the_best_reading_is_kept_at_each_working_set_size():
    bench = _bench()
    low = {"read_gb_s": 32.0, "read_gb_s_at": LADDER_LOW, "gflop_s": 150.0, "threads": 2.0}
    high = {"read_gb_s": 31.0, "read_gb_s_at": LADDER_HIGH, "gflop_s": 160.0, "threads": 2.0}
    best = bench.best_peaks([low, high])
    assert best["read_gb_s"] == 32.0 and best["gflop_s"] == 160.0
    assert best["read_gb_s_at"] == {MIB: 110.0, 4 * MIB: 120.0, 16 * MIB: 70.0, 64 * MIB: 40.0,
                                    256 * MIB: 32.0}


def test_a_working_set_is_read_at_the_best_rate_of_a_size_up_to_its_own():
    bench = _bench()
    peaks = {"read_gb_s": 32.0, "read_gb_s_at": LADDER_LOW}
    assert bench.bandwidth_for(300_000, peaks) == 110.0  # under every probe: the smallest probe's
    assert bench.bandwidth_for(8 * MIB, peaks) == 110.0  # 1 and 4 MiB fit: the faster of the two
    assert bench.bandwidth_for(1 << 30, peaks) == 110.0  # every probe fits; none is slower than DRAM
    assert bench.bandwidth_for(8 * MIB, {"read_gb_s": 32.0, "read_gb_s_at": LADDER_HIGH}) == 120.0
    assert bench.bandwidth_for(8 * MIB, {"read_gb_s_at": {256 * MIB: 32.0}}) == 32.0  # DRAM's alone


def test_a_cache_sized_row_gets_a_cache_sized_floor():
    bench = _bench()
    peaks = {"read_gb_s": 32.0, "read_gb_s_at": {MIB: 110.0, 256 * MIB: 32.0}, "gflop_s": 150.0}
    small = {"compulsory_bytes": 8 * MIB, "flops": 10**6, "source_ms": 0.571}
    large = {"compulsory_bytes": 512 * MIB, "flops": 10**6, "source_ms": 100.0}
    bench.add_roofline(small, peaks)
    bench.add_roofline(large, {**peaks, "read_gb_s_at": {256 * MIB: 32.0}})
    assert small["floor_gb_s"] == 110.0 and round(small["floor_ms"], 4) == round(8 * MIB / 110e6, 4)
    assert large["floor_gb_s"] == 32.0 and round(large["floor_ms"], 2) == round(512 * MIB / 32e6, 2)
    # the pooling row of one run: 3.2x over a 0.571 ms source, which DRAM's rate alone called impossible
    dram_only = {"compulsory_bytes": 8 * MIB, "flops": 10**6, "source_ms": 0.571}
    bench.add_roofline(dram_only, {"read_gb_s": 32.0, "read_gb_s_at": {256 * MIB: 32.0}, "gflop_s": 150.0})
    assert dram_only["ceiling"] < 3.2 < small["ceiling"]


def test_the_machine_is_read_at_every_probed_size():
    bench = _bench()
    peaks = bench.machine_peaks(repeats=1)
    assert sorted(peaks["read_gb_s_at"]) == [mib * MIB for mib in bench.READ_PROBE_MIB]
    assert all(rate > 0 for rate in peaks["read_gb_s_at"].values())
    assert peaks["read_gb_s"] == peaks["read_gb_s_at"][max(bench.READ_PROBE_MIB) * MIB]
    assert peaks["gflop_s"] > 0


def test_a_row_beyond_its_ceiling_is_marked_in_the_table(tmp_path, capsys):
    import json

    bench = _bench()
    row = {"id": "level1/parameter_and_constant", "level": 1, "sets": {"BATCH": 16, "DIM": 16384},
           "t": 1.0, "eager_ms": 0.095, "under_floor": True, "outcome": "pass", "steps": 5,
           "source_ms": 0.09, "kernel_ms": 1e-9, "search_speedup": 3.6, "speedup_vs_source": 9e7,
           "speedup_vs_torch": 9.5e7}
    slow = {**row, "id": "level1/cosine_similarity_loss", "sets": {"BATCH": 128, "DIM": 4096},
            "kernel_ms": 1.0, "speedup_vs_source": 0.09, "speedup_vs_torch": 0.095}
    run = tmp_path / "run.json"
    run.write_text(json.dumps([row, slow]), encoding="utf-8")
    assert bench.main(["--report", str(run)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("level1/")}
    assert "! " in lines["level1/parameter_and_constant"] and "! " not in lines["level1/cosine_similarity_loss"]
    assert "read GB/s by working-set size (1 MiB" in out and "the tuned kernel beat the ceiling" in out


def test_the_unfused_source_is_timed_in_real_jobs():
    from leir.program import load_program

    bench = _bench()
    assert bench.UNFUSED_TWIN == {"llvm-native": "llvm-host"} and bench.BENCH_TARGET == "llvm-native"
    program = load_program("input A: f32[64, 256]\noutput C: f32[64]\n---\n"
                           "B^{64}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a}*2;];")
    args = SimpleNamespace(final_jobs=2, repeats=2, min_repeat_ms=1.0)
    seconds = bench.source_seconds_on(program, "llvm-host", args, None)
    assert isinstance(seconds, float) and seconds > 0


def test_the_bench_runs_one_side_of_the_split_or_a_sample_of_it():
    from tuner.splits import workload_split

    bench = _bench()
    split = workload_split()
    args = SimpleNamespace(only=None, split="heldout", levels="1,2", per_level=0)
    assert [w.id for w in bench.chosen_workloads(args)] == list(split.heldout)
    args.per_level, args.split = 2, "fitting"
    sampled = [w.id for w in bench.chosen_workloads(args)]
    assert len(sampled) == 4 and set(sampled) <= set(split.fitting)
    assert [w.level for w in bench.chosen_workloads(args)] == [1, 1, 2, 2]
    args.only = ["level1/relu"]
    assert [w.id for w in bench.chosen_workloads(args)] == ["level1/relu"]


def test_resume_needs_the_json_file():
    import pytest

    with pytest.raises(SystemExit):
        _bench().main(["--resume"])
