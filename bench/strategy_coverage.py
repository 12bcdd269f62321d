"""Verified steps per strategy over the built-in suite at depth ≤ 2: does every strategy reach 20?

Usage::

    steptp generate level1 level2 --depth 2 --no-verify -o /tmp/d2.jsonl      # fast: plans and applies
    python bench/strategy_coverage.py /tmp/d2.jsonl [--per-strategy 25] [--seed 0] [--workers 2]

Reads unverified step records (``steptp generate --no-verify``), draws for every strategy a seeded
sample of at most ``--per-strategy`` applied steps (depth 1 and 2 alike, spread over workloads first), and
verifies each against its parent exactly as generation does (the sandboxed verifier, the step's
required outcome: ``equal_pass`` for E, ``pass`` for N). Prints, per strategy: steps generated, distinct
workloads, sampled, accepted, and whether the 20-step bar is met — the figure the strategy issues ask for
— with the reasons of the rejected ones summarised.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.program import program_from_json

BAR = 20


def read_applied(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Applied (status ``unverified``) records grouped by strategy, in file order."""
    by_strategy: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("child") is not None:
                by_strategy[record["strategy"]].append(record)
    return by_strategy


def parse_numbers(text: str) -> set[int]:
    """``1-23,41`` → {1, …, 23, 41}."""
    numbers: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        numbers.update(range(int(low), int(high or low) + 1))
    return numbers


def weighted_rate(rows: list[dict[str, Any]]) -> float:
    """Estimated share of all generated steps that verify: each strategy's sampled acceptance rate,
    weighted by how many steps it generated (the sample is stratified, so its raw rate is not that)."""
    steps = sum(r["steps"] for r in rows if r["tried"])
    return sum(r["steps"] * r["accepted"] / r["tried"] for r in rows if r["tried"]) / steps if steps else 0.0


def spread_sample(records: list[dict[str, Any]], k: int, rng: random.Random) -> list[dict[str, Any]]:
    """Up to ``k`` records, round-robin over workloads (shuffled by ``rng``) so one workload can't fill it."""
    by_workload: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_workload[record["source"]["workload"]].append(record)
    queues = [rng.sample(group, len(group)) for _, group in sorted(by_workload.items())]
    rng.shuffle(queues)
    chosen: list[dict[str, Any]] = []
    while len(chosen) < k and any(queues):
        for queue in queues:
            if queue and len(chosen) < k:
                chosen.append(queue.pop())
    return chosen


def verify_record(record: dict[str, Any]) -> tuple[bool, str]:
    """(accepted, reason) for one step, judged as ``dataset.records`` judges generated steps."""
    from verifier.verify import verify

    before = program_from_json(record["parent"]["program"])
    after = program_from_json(record["child"]["program"])
    result = verify(after, parent=before, reference="parent")
    outcome = result.outcome.value
    required = "equal_pass" if record["exactness"] == "E" else "pass"
    accepted = outcome == "equal_pass" or (outcome == "pass" and required == "pass")
    return accepted, "" if accepted else (outcome if outcome != "pass" else "not_bitwise_equal")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("steps", type=Path, nargs="?",
                        help="records of `steptp generate --no-verify` (bare, as in make bench: a no-op)")
    parser.add_argument("--per-strategy", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("--numbers", help="only these catalogue numbers, e.g. 1-23 or 24-35,41")
    args = parser.parse_args()
    if args.steps is None:
        print("strategy_coverage: give the records of a `steptp generate --no-verify` run (see --help)")
        return 0

    by_strategy = read_applied(args.steps)
    if args.numbers:
        wanted = parse_numbers(args.numbers)
        by_strategy = {name: records for name, records in by_strategy.items()
                       if records[0]["number"] in wanted}
    rng = random.Random(args.seed)
    samples = {name: spread_sample(records, args.per_strategy, rng)
               for name, records in sorted(by_strategy.items(), key=lambda kv: kv[1][0]["number"])}
    jobs = [(name, record) for name, chosen in samples.items() for record in chosen]
    started = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda job: verify_record(job[1]), jobs))
    seconds = time.perf_counter() - started

    accepted: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    for (name, _), (ok, why) in zip(jobs, results, strict=True):
        if ok:
            accepted[name] += 1
        else:
            reasons[name][why] += 1
    rows = []
    print(f"{'#':>3} {'strategy':<58} {'steps':>6} {'wl':>4} {'tried':>5} {'ok':>4}  bar  rejected")
    for name, chosen in samples.items():
        records = by_strategy[name]
        workloads = len({r["source"]["workload"] for r in records})
        ok = accepted[name]
        meets = ok >= BAR
        why = ", ".join(f"{k} {v}" for k, v in reasons[name].most_common())
        rows.append({"number": records[0]["number"], "strategy": name, "steps": len(records),
                     "workloads": workloads, "tried": len(chosen), "accepted": ok, "meets_bar": meets,
                     "rejected": dict(reasons[name])})
        print(f"{records[0]['number']:>3} {name:<58} {len(records):>6} {workloads:>4} {len(chosen):>5} "
              f"{ok:>4}  {'yes' if meets else 'NO '}  {why}")
    short = [r["strategy"] for r in rows if not r["meets_bar"]]
    print(f"\n{len(jobs)} verifications in {seconds:.0f} s; {len(rows) - len(short)}/{len(rows)} strategies "
          f"reach {BAR} accepted steps" + (f"; short: {', '.join(short)}" if short else ""))
    tried = sum(r["tried"] for r in rows)
    print(f"accepted in the sample: {sum(r['accepted'] for r in rows)}/{tried}; estimated share of the "
          f"{sum(r['steps'] for r in rows)} generated steps that verify (per-strategy rates weighted by "
          f"steps generated): {100 * weighted_rate(rows):.1f} %")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
