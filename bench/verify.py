"""Verification throughput: verifications per minute with a warm sandbox pool, cold workers and cache hits.

Usage: ``python bench/verify.py [--max-iterations N] [--limit K] [--cold K] [--workers W]``.

Programs: the corpus programs whose iteration count (statement executions) is at most ``--max-iterations``
(run at their real shapes — no shrinking), each verified with the default reference (the LEIR
interpreter) on seed 0. Three measurements in the same run, so the ratios survive a noisy shared machine:

* **cold** (the baseline): every verification starts a fresh sandbox worker that imports TVM, as a naive
  "subprocess per job" design would;
* **warm**: ``--workers`` long-lived workers, started beforehand, take the jobs (the design in use);
  build and run time are split using the times measured inside the sandbox;
* **cache hit**: the same verifications again, answered from the on-disk result cache.

The issue's target is >= 60 verifications/min with a warm pool on the 2-core machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.corpus import load_corpus
from verifier import verify as verify_mod
from verifier.cache import ResultCache
from verifier.reference import iteration_count
from verifier.sandbox import WorkerPool
from verifier.verify import verify


def pick_programs(max_iterations: int, limit: int):
    entries = [e for e in load_corpus() if iteration_count(e.program) <= max_iterations]
    entries.sort(key=lambda e: (iteration_count(e.program), e.id))
    return entries[:limit]


def run_warm(entries, workers: int, cache: ResultCache):
    """Verify every entry on a started pool; returns (wall seconds, results, pool start seconds)."""
    pool = WorkerPool(workers, warm_modules=verify_mod.WARM_MODULES)
    start = time.perf_counter()
    pool.start()
    startup = time.perf_counter() - start
    try:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as executor:
            results = list(executor.map(lambda e: verify(e.program, pool=pool, cache=cache), entries))
        wall = time.perf_counter() - start
    finally:
        pool.close()
    return wall, results, startup


def run_cold(entries):
    start = time.perf_counter()
    results = []
    for entry in entries:
        with WorkerPool(1, warm_modules=verify_mod.WARM_MODULES) as pool:
            results.append(verify(entry.program, pool=pool, cache=False))
    return time.perf_counter() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-iterations", type=int, default=300_000)
    parser.add_argument("--limit", type=int, default=40, help="programs verified warm (default 40)")
    parser.add_argument("--cold", type=int, default=5, help="programs verified cold (default 5)")
    parser.add_argument("--workers", type=int, default=1, help="warm pool size (default 1)")
    args = parser.parse_args()

    entries = pick_programs(args.max_iterations, args.limit)
    print(f"{len(entries)} corpus programs with <= {args.max_iterations:,} statement executions "
          f"(median {statistics.median(iteration_count(e.program) for e in entries):,.0f})")

    cold_wall, cold_results = run_cold(entries[: args.cold])
    cold_rate = len(cold_results) / cold_wall * 60
    print(f"cold  (fresh worker per job): {len(cold_results):3d} verifications in {cold_wall:7.2f} s "
          f"= {cold_rate:6.1f} /min")

    with tempfile.TemporaryDirectory() as cache_dir:
        cache = ResultCache(cache_dir)
        warm_wall, warm_results, startup = run_warm(entries, args.workers, cache)
        warm_rate = len(warm_results) / warm_wall * 60
        print(f"warm  ({args.workers} worker(s), started in {startup:.1f} s): {len(warm_results):3d} "
              f"verifications in {warm_wall:7.2f} s = {warm_rate:6.1f} /min")
        build = sum(r.build_seconds or 0.0 for r in warm_results)
        run = sum(r.run_seconds or 0.0 for r in warm_results)
        other = max(warm_wall * args.workers - build - run, 0.0)
        print(f"      split: build {build:6.2f} s ({build / len(warm_results) * 1e3:6.1f} ms/verification), "
              f"run + reference + compare {run:6.2f} s ({run / len(warm_results) * 1e3:6.1f} ms), "
              f"other (inputs, IPC, checker) {other:6.2f} s")
        outcomes = Counter(r.outcome.value for r in warm_results)
        print(f"      outcomes: {dict(sorted(outcomes.items()))}")
        for entry, result in zip(entries, warm_results, strict=True):
            if not result.ok:
                first_line = (result.error or "").splitlines()[0][:100] if result.error else ""
                print(f"        {entry.id}: {result.outcome.value}: {first_line}")

        start = time.perf_counter()
        hits = [verify(e.program, cache=cache) for e in entries]
        hit_wall = time.perf_counter() - start
        assert all(h.cache_hit for h in hits), "every repeat must be a cache hit"
        hit_ms = hit_wall / len(hits) * 1e3
        print(f"cache hit: {hit_ms:6.2f} ms per verification (hash + lookup)")

    warm_per = warm_wall / len(warm_results)
    cold_per = cold_wall / len(cold_results)
    print("ratios (same run):")
    print(f"  warm vs cold throughput:     {cold_per / warm_per:6.1f}x")
    print(f"  cache hit vs warm verify:    {warm_per * 1e3 / hit_ms:6.1f}x faster")
    print(f"  target 60 /min: {'met' if warm_rate >= 60 else 'NOT met'} ({warm_rate:.1f} /min)")


if __name__ == "__main__":
    main()
