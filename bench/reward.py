"""Throughput of the verifier-backed reward (``rewards.VerifierReward``): answers scored per second.

Usage: ``python bench/reward.py [--answers 24] [--workers 1 2]``.

The answers are the reference answers of verified steps of the golden seeded generation
(``tests/pipeline/golden/steps.jsonl``, every step's own prompt and answer, so each one is screened,
matched to a legal step and verified in the sandbox) plus as many off-format ones (screened out before
any build). For each worker count (a fresh, empty on-disk verifier cache each):

* **uncached** — a reward with no memory cache, no on-disk result cache and no kernel reuse, scoring the
  batch twice: the first pass includes starting the sandbox workers (a trainer's first batch), the
  second runs on the warm pool;
* **cached** — a reward with its caches: the first pass fills them, the second is all in-memory hits
  (keyed by program hash), then a fresh reward scores the batch from the on-disk verifier cache alone.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _answers(count: int) -> tuple[list, list]:
    from dataset.records import load_records
    from dataset.rendering import answer_text, prompt_text, prompt_turns
    from tests.training.data import steps_file

    with tempfile.TemporaryDirectory() as tmp:
        records = [r for r in load_records(steps_file(Path(tmp) / "steps.jsonl"))
                   if r["status"] == "verified"]
    records = records[: count // 2]
    prompts = [prompt_turns(prompt_text(r)) for r in records]
    completions = [answer_text(r) for r in records]
    # off-format answers: scored without a build
    prompts += prompts[: count - len(records)]
    completions += ["I would tile the loop."] * (count - len(records))
    return prompts, completions


def _rate(reward, prompts, completions) -> tuple[float, float, list]:
    start = time.perf_counter()
    values = reward(prompts, completions)
    seconds = time.perf_counter() - start
    return len(prompts) / seconds, seconds, values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=24)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()

    import os

    from rewards import VerifierReward

    prompts, completions = _answers(args.answers)
    verified = sum(1 for c in completions if c.startswith("<think>"))
    print(f"{len(prompts)} answers ({verified} verified in the sandbox, "
          f"{len(prompts) - verified} off-format)")
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as cache_dir:
            os.environ["STEPTP_CACHE_DIR"] = cache_dir
            with VerifierReward(workers=workers, cache=False) as reward:
                rate, seconds, values = _rate(reward, prompts, completions)
                warm_rate, warm_seconds, _ = _rate(reward, prompts, completions)
            print(f"workers={workers} uncached: {rate:7.2f} answers/s ({seconds:.1f} s, pool start "
                  "included); "
                  f"warm pool {warm_rate:7.2f} answers/s ({warm_seconds:.1f} s)")
            accepted = sum(1 for v in values if v >= 1.0)
            print(f"  rewards: {accepted} accepted of {verified} verified answers")
            with VerifierReward(workers=workers, cache=True) as reward:
                fill_rate, fill_seconds, _ = _rate(reward, prompts, completions)
                hit_rate, hit_seconds, _ = _rate(reward, prompts, completions)
            with VerifierReward(workers=workers, cache=True) as reward:
                disk_rate, disk_seconds, _ = _rate(reward, prompts, completions)
            print(f"workers={workers} cached: first pass {fill_rate:7.2f} answers/s ({fill_seconds:.1f} s), "
                  f"memory hits {hit_rate:9.1f} answers/s ({hit_seconds:.3f} s), "
                  f"disk-cache hits (fresh reward) {disk_rate:7.2f} answers/s ({disk_seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
