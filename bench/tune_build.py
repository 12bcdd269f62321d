"""Per-candidate seconds of a fixed small search, with the warm worker's reuse (``verifier.reuse``) or not.

Usage: ``python bench/tune_build.py [--only level1/layer_norm ...] [--budget N] [--branch B] [--shape-t T]``.

Per workload the same search runs three times in this process, each on a fresh warm pool (so nothing
carries over from one mode to the next):

* ``none``    — ``reuse=False``: every job builds the candidate, its parent and the source, runs the
  parent for the expected outputs, evaluates the parent's error bound and times all three;
* ``exact``   — ``reuse=True`` (the default): the worker reuses kernels, the parent's outputs and its
  error bound for the same (program, target, inputs) — the result bytes are the same;
* ``timings`` — also ``reuse_timings=True``: the parent's and the source's timings are taken once.

The search is BFS with ``RulePolicy`` without a measured-cost cache, so the candidates it measures depend on
which ones verify, never on their timings: the three modes measure the same candidates, and the script
checks that their outcomes are identical. Printed: seconds per candidate (the ``Measurer.measure`` call,
policy time excluded), mean and median, the speedup of each mode over ``none``, and the
worker's reuse hits.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataset.generation import Source
from dataset.records import SourceInfo
from frontend import translate_file
from leir.program import program_hash
from tuner.measure import Measurer
from tuner.policies import RulePolicy
from tuner.run import tune
from tuner.search import Budget

MODES = {"none": {"reuse": False}, "exact": {"reuse": True},
         "timings": {"reuse": True, "reuse_timings": True}}


class TimedMeasurer(Measurer):
    """A ``Measurer`` that keeps each measurement's wall seconds and outcome."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seconds: list[float] = []
        self.outcomes: list[tuple[str, str]] = []

    def measure(self, after, before, exactness):
        start = time.perf_counter()
        measured = super().measure(after, before, exactness)
        self.seconds.append(time.perf_counter() - start)
        self.outcomes.append((program_hash(after), str(measured.verification.get("outcome"))))
        return measured


def run_mode(info, sets, mode: str, args) -> dict:
    from verifier import reuse

    program = translate_file(info.path, sets=sets).program
    source = Source(SourceInfo(f"{info.id}@f32#build", info.id, info.level, "f32", 0, sets,
                               program_hash(program)), program)
    measurer = TimedMeasurer(program, cache=False, repeats=args.repeats, min_repeat_ms=args.min_repeat_ms,
                             **MODES[mode])
    try:
        measurer.pool.start()
        tune(source, RulePolicy(seed=0), measurer, Budget(verifications=args.budget), algo="bfs",
             branch=args.branch, max_depth=args.max_depth)
        job = measurer.pool.run(reuse.stats)
        hits = job.value if job.ok else {}
    finally:
        measurer.close()
    return {"seconds": measurer.seconds, "outcomes": measurer.outcomes, "hits": hits}


def main(argv: list[str] | None = None) -> int:
    from workloads.registry import get_workload
    from workloads.variants import scaled_shapes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append",
                        help="workload id(s) (default: level1/layer_norm, level2/gemm_batchnorm_eval_relu)")
    parser.add_argument("--budget", type=int, default=8, help="verifications per search")
    parser.add_argument("--branch", type=int, default=4)
    parser.add_argument("--max-depth", type=int, default=3)
    parser.add_argument("--shape-t", type=float, default=0.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-repeat-ms", type=float, default=20.0)
    args = parser.parse_args(argv)
    ids = args.only or ["level1/layer_norm", "level2/gemm_batchnorm_eval_relu"]
    print(f"BFS + RulePolicy, {args.budget} verifications, branch {args.branch}, shapes at t={args.shape_t}, "
          f"timing {args.repeats} x >= {args.min_repeat_ms} ms")
    print(f"{'workload':34} {'mode':8} {'s/cand':>7} {'median':>7} {'vs none':>7}  same outcomes  reuse hits")
    totals: dict[str, list[float]] = {m: [] for m in MODES}
    for wid in ids:
        info = get_workload(wid)
        sets = scaled_shapes(info, args.shape_t)
        results = {mode: run_mode(info, sets, mode, args) for mode in MODES}
        base = statistics.fmean(results["none"]["seconds"])
        for mode, res in results.items():
            mean = statistics.fmean(res["seconds"])
            totals[mode].append(mean)
            same = res["outcomes"] == results["none"]["outcomes"]
            hits = ", ".join(f"{k} {v['hits']}" for k, v in res["hits"].items() if v["hits"])
            print(f"{wid:34} {mode:8} {mean:7.3f} {statistics.median(res['seconds']):7.3f} "
                  f"{base / mean:6.2f}x  {str(same):13}  {hits}")
    for mode, values in totals.items():
        print(f"all workloads {mode:8}: {statistics.fmean(values):.3f} s per candidate "
              "(mean of the workload means)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
