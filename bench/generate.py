"""Generation throughput: steps/s without verification, verified steps/min end to end.

Usage: ``python bench/generate.py [--workloads W ...] [--depth D] [--max-steps-per-state M]
[--verify-workloads W ...] [--workers N]``.

Two measurements, each with a baseline measured in the same run (the machine is shared and noisy):

* **unverified generation** (one core): ``dataset.generation`` over the source states of
  ``--workloads`` at depth ``--depth`` with no verifier — planning, ``apply_strategy`` (site and parameter
  validation, the checker on the result, the no-op refusal, exactness, the trace and its grounding check),
  the record and its JSON line. Baseline: the bare ``Strategy.apply`` calls of the same planned steps (no
  gates, no trace, no record), so the ratio is the share of raw rewrite speed the pipeline keeps.
  Target: >= 200 steps/s.
* **verified generation** (``--workers`` sandbox workers, cold result cache in a temporary folder, pool
  start-up included): every step built with TVM and compared with its parent. Baseline: the same run with
  one worker; the ratio is the parallel speed-up. Target: >= 150 verified steps/min with 2 workers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataset.generation import GenerationConfig, generate
from dataset.planning import plan_steps
from dataset.records import load_records
from steptp_cli.dataset_commands import load_sources, make_verify
from strategies import all_strategies

DEFAULT_WORKLOADS = ["level1/layer_norm", "level1/softmax", "level1/matmul", "level1/conv2d",
                     "level2/conv2d_groupnorm_silu", "level1/matmul_tall_skinny"]


def unverified(sources, config: GenerationConfig, folder: Path) -> tuple[float, float, int, list]:
    """(wall seconds, CPU seconds of this process, steps, records): single-threaded, so CPU = one core."""
    path = folder / "unverified.jsonl"
    start, cpu = time.perf_counter(), time.process_time()
    generate(sources, config, path, verify=None)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    records = list(load_records(path, validate=False))
    return wall, cpu, len(records), records


def raw_apply_seconds(records, config: GenerationConfig) -> tuple[float, int]:
    """CPU seconds of bare ``Strategy.apply`` over the planned steps of the same parent states, and count."""
    from leir.program import program_from_json

    parents = {r["parent"]["hash"]: program_from_json(r["parent"]["program"]) for r in records}
    planned = []
    for state_hash, program in parents.items():
        plan = plan_steps(program, state_hash, all_strategies(), seed=config.seed,
                          params_per_site=config.params_per_site, max_steps=config.max_steps_per_state)
        planned += [(program, p) for p in plan.steps]
    start = time.process_time()
    for program, p in planned:
        try:
            p.strategy.apply(program, p.site, p.params)
        except Exception:
            continue
    return time.process_time() - start, len(planned)


def verified(sources, config: GenerationConfig, workers: int, folder: Path) -> tuple[float, float, int, int]:
    """(wall seconds incl. pool start, pool start seconds, steps, verified steps) with a cold cache."""
    path = folder / f"verified-{workers}.jsonl"
    start = time.perf_counter()
    verify, pool = make_verify(workers=workers, cache=True, cache_dir=str(folder / f"cache-{workers}"))
    try:
        pool.start()
        startup = time.perf_counter() - start
        generate(sources, config, path, verify=verify, workers=workers)
    finally:
        pool.close()
    wall = time.perf_counter() - start
    records = list(load_records(path, validate=False))
    return wall, startup, len(records), sum(r["status"] == "verified" for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=DEFAULT_WORKLOADS)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--max-steps-per-state", type=int, default=40)
    parser.add_argument("--verify-workloads", nargs="+",
                        default=["level1/layer_norm", "level1/matmul_tall_skinny", "level1/conv2d",
                                 "level2/conv2d_groupnorm_silu"])
    parser.add_argument("--verify-max-steps", type=int, default=12, help="steps per state when verifying")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sources = load_sources(args.workloads, seed=args.seed, warn=lambda text: print(text, file=sys.stderr))
    config = GenerationConfig(depth=args.depth, seed=args.seed, max_steps_per_state=args.max_steps_per_state)
    with tempfile.TemporaryDirectory(prefix="steptp-bench-generate-") as tmp:
        folder = Path(tmp)
        wall, cpu, steps, records = unverified(sources, config, folder)
        raw_cpu, raw_steps = raw_apply_seconds(records, config)
        rate = steps / cpu if cpu else float("inf")
        raw_rate = raw_steps / raw_cpu if raw_cpu else float("inf")
        print(f"strategies registered: {len(all_strategies())}; sources: {len(sources)}; depth {args.depth}")
        print(f"unverified generation: {steps} steps in {cpu:.2f} CPU s ({wall:.2f} s wall) = {rate:.0f} "
              f"steps/s on one core (target >= 200: {'met' if rate >= 200 else 'NOT met'})")
        print(f"  baseline bare Strategy.apply: {raw_steps} applies in {raw_cpu:.2f} CPU s = "
              f"{raw_rate:.0f}/s; pipeline/raw = {rate / raw_rate:.2f}")

        vsources = load_sources(args.verify_workloads, seed=args.seed, warn=lambda text: None)
        vconfig = GenerationConfig(depth=1, seed=args.seed, max_steps_per_state=args.verify_max_steps)
        one_wall, one_start, one_steps, one_ok = verified(vsources, vconfig, 1, folder)
        many_wall, many_start, many_steps, many_ok = verified(vsources, vconfig, args.workers, folder)
        one_rate, many_rate = one_ok / one_wall * 60, many_ok / many_wall * 60
        warm_rate = many_ok / max(many_wall - many_start, 1e-9) * 60
        print(f"verified generation, {args.workers} workers, cold cache: {many_ok}/{many_steps} verified in "
              f"{many_wall:.1f} s = {many_rate:.0f} verified steps/min "
              f"(target >= 150: {'met' if many_rate >= 150 else 'NOT met'}); "
              f"{warm_rate:.0f}/min after the pool's {many_start:.1f} s start-up")
        print(f"  baseline 1 worker: {one_ok}/{one_steps} in {one_wall:.1f} s = {one_rate:.0f}/min "
              f"({one_start:.1f} s start-up); speed-up {many_rate / one_rate:.2f}x")


if __name__ == "__main__":
    main()
