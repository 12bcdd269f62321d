"""Generation throughput: steps/s without verification, verified steps/min end to end.

Usage: ``python bench/generate.py [--workloads W ...] [--depth D] [--max-steps-per-state M]
[--per-class K] [--verify-max-steps M] [--workers N] [--skip-unverified] [--skip-verified]``.

Two measurements, each with a baseline measured in the same run (the machine is shared and noisy):

* **unverified generation** (one core): ``dataset.generation`` over the source states of
  ``--workloads`` at depth ``--depth`` with no verifier — planning, ``apply_strategy`` (site and parameter
  validation, the checker on the result, the no-op refusal, exactness, the trace and its grounding check),
  the record and its JSON line. Baseline: the bare ``Strategy.apply`` calls of the same planned steps (no
  gates, no trace, no record), so the ratio is the share of raw rewrite speed the pipeline keeps.
  Target: >= 200 steps/s.
* **verified generation** on a seeded sample of ``--per-class`` workloads per level and size class (the
  terciles of statement executions among the workloads drawn per level: 24 by default), depth 1, at most
  ``--verify-max-steps`` steps per state, a cold result cache per run, pool start-up included: verified
  steps/min with 1 and ``--workers`` workers, timing off and on (``generate --time``), each on the new path
  (per-state reuse: the parent timed once per worker and state, bitwise-equal outputs skip the error
  bound) and on the old one (``--no-state-reuse``) in the same run. Targets with 2 workers: >= 60 verified
  steps/min timing off, >= 30 timing on.
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


SIZE_CLASSES = ("small", "medium", "large")


def draw_sample(per_class: int, seed: int) -> list[tuple[str, str]]:
    """A seeded sample of ``per_class`` workloads per (level, size class): (workload id, class). Per level,
    ``3 * per_class`` workloads drawn in a seeded order (those that translate at their defaults), ranked by
    statement executions (``verifier.reference.iteration_count``) and cut into terciles: small, medium,
    large."""
    import random

    from verifier.reference import iteration_count
    from workloads.registry import list_workloads

    chosen: list[tuple[str, str]] = []
    for level in (1, 2):
        ids = sorted(w.id for w in list_workloads(level))
        random.Random(f"{seed}|bench-generate|{level}").shuffle(ids)
        drawn: list[tuple[int, str]] = []
        for workload in ids:
            if len(drawn) == 3 * per_class:
                break
            sources = load_sources([workload], seed=seed, warn=lambda text: None)
            if sources:
                drawn.append((iteration_count(sources[0].program), workload))
        for rank, (_executions, workload) in enumerate(sorted(drawn)):
            chosen.append((workload, SIZE_CLASSES[min(rank // per_class, 2)]))
    return chosen


def verified(sources, config: GenerationConfig, workers: int, folder: Path, *, time_steps: bool,
             state_reuse: bool) -> tuple[float, float, int, int, int]:
    """(wall seconds incl. pool start, pool start seconds, steps, verified steps, steps with a measured
    effect) with a cold result cache, on the new path (``state_reuse``) or the old one."""
    from tuner.effect import feature_function

    name = f"verified-{workers}-{'time' if time_steps else 'notime'}-{'new' if state_reuse else 'old'}"
    path = folder / f"{name}.jsonl"
    start = time.perf_counter()
    verify, pool = make_verify(workers=workers, cache=True, cache_dir=str(folder / f"cache-{name}"),
                               time=time_steps, state_reuse=state_reuse)
    try:
        pool.start()
        startup = time.perf_counter() - start
        generate(sources, config, path, verify=verify, workers=workers, features=feature_function("llvm"),
                 target="llvm")
    finally:
        pool.close()
    wall = time.perf_counter() - start
    records = list(load_records(path, validate=False))
    ok = [r for r in records if r["status"] == "verified"]
    return wall, startup, len(records), len(ok), sum(r["effect"]["measured"] is not None for r in ok)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=DEFAULT_WORKLOADS)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--max-steps-per-state", type=int, default=40)
    parser.add_argument("--per-class", type=int, default=4,
                        help="workloads drawn per level and size class for the verified runs (default 4: 24)")
    parser.add_argument("--verify-max-steps", type=int, default=3, help="steps per state when verifying")
    parser.add_argument("--skip-unverified", action="store_true")
    parser.add_argument("--skip-verified", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sources = [] if args.skip_unverified else load_sources(args.workloads, seed=args.seed,
                                                             warn=lambda text: print(text, file=sys.stderr))
    config = GenerationConfig(depth=args.depth, seed=args.seed, max_steps_per_state=args.max_steps_per_state)
    with tempfile.TemporaryDirectory(prefix="steptp-bench-generate-") as tmp:
        folder = Path(tmp)
        if not args.skip_unverified:
            wall, cpu, steps, records = unverified(sources, config, folder)
            raw_cpu, raw_steps = raw_apply_seconds(records, config)
            rate = steps / cpu if cpu else float("inf")
            raw_rate = raw_steps / raw_cpu if raw_cpu else float("inf")
            print(f"strategies registered: {len(all_strategies())}; sources: {len(sources)}; "
                  f"depth {args.depth}")
            print(f"unverified generation: {steps} steps in {cpu:.2f} CPU s ({wall:.2f} s wall) = {rate:.0f} "
                  f"steps/s on one core (target >= 200: {'met' if rate >= 200 else 'NOT met'})")
            print(f"  baseline bare Strategy.apply: {raw_steps} applies in {raw_cpu:.2f} CPU s = "
                  f"{raw_rate:.0f}/s; pipeline/raw = {rate / raw_rate:.2f}")

        if args.skip_verified:
            return
        sample = draw_sample(args.per_class, args.seed)
        classes: dict[str, int] = {}
        for _workload, name in sample:
            classes[name] = classes.get(name, 0) + 1
        print(f"verified sample: {len(sample)} workloads (seed {args.seed}; "
              + ", ".join(f"{k} {v}" for k, v in classes.items()) + "): " + " ".join(w for w, _c in sample))
        vsources = load_sources([w for w, _c in sample], seed=args.seed, warn=lambda text: None)
        vconfig = GenerationConfig(depth=1, seed=args.seed, max_steps_per_state=args.verify_max_steps)
        print(f"depth 1, at most {args.verify_max_steps} steps per state, cold result cache per run")
        # the target configurations first: a run cut short still reports them
        for time_steps, workers in ((False, args.workers), (True, args.workers), (False, 1), (True, 1)):
            rates = {}
            for state_reuse in (False, True):
                wall, start, steps, ok, measured = verified(
                    vsources, vconfig, workers, folder, time_steps=time_steps, state_reuse=state_reuse)
                rates[state_reuse] = ok / wall * 60
                label = "new path (per-state reuse)" if state_reuse else "old path (--no-state-reuse)"
                timed = f", {measured}/{ok} with a measured effect" if time_steps else ""
                print(f"  timing {'on ' if time_steps else 'off'} {workers} worker(s) {label}: "
                      f"{ok}/{steps} "
                      f"verified in {wall:.1f} s ({start:.1f} s pool start) = {rates[state_reuse]:.1f} "
                      f"verified steps/min{timed}")
            target = 30 if time_steps else 60
            verdict = (f"target >= {target} with {workers} workers: "
                       f"{'met' if rates[True] >= target else 'NOT met'}") if workers > 1 else ""
            print(f"    new/old = {rates[True] / max(rates[False], 1e-9):.2f}x {verdict}")


if __name__ == "__main__":
    main()
