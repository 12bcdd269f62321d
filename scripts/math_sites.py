"""Candidate sites of chosen strategies over the built-in suite at depth <= 2 (sources and one step on).

    python scripts/math_sites.py --strategy exponential_split --strategy additive_split

Depth 1 is the source state of every workload (f32); depth 2 adds, per source, the state after one step
of every registered strategy at its first site with its first parameters (what ``steptp apply`` does by
default), deduplicated by content hash — so enabling steps (a running max before exponential_split,
compute_inline before an algebraic rewrite) count their natural follow-up sites.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.program import program_hash
from strategies import all_strategies, apply_strategy, get_strategy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", action="append", required=True, help="strategy to count (repeatable)")
    parser.add_argument("--workload", action="append", help="only these workload ids (repeatable)")
    args = parser.parse_args()
    from workloads.registry import source_programs

    counted = [get_strategy(n) for n in args.strategy]
    source_sites: Counter[str] = Counter()
    step_sites: Counter[str] = Counter()
    programs: Counter[str] = Counter()
    states = 0
    start = time.time()
    for workload_id, source in source_programs("f32", ids=args.workload):
        children = {}
        for strategy in all_strategies():
            try:
                if strategy.candidates(source):
                    child = apply_strategy(source, strategy, 0).after
                    children.setdefault(program_hash(child), child)
            except Exception as exc:
                print(f"{workload_id}: {strategy.name} site 0: {type(exc).__name__}: {exc}"[:200],
                      file=sys.stderr)
        children.pop(program_hash(source), None)
        states += 1 + len(children)
        for strategy in counted:
            here = len(strategy.candidates(source))
            later = sum(len(strategy.candidates(child)) for child in children.values())
            source_sites[strategy.name] += here
            step_sites[strategy.name] += later
            programs[strategy.name] += bool(here or later)
    print(f"{states} states ({time.time() - start:.0f} s)")
    print(f"{'#':>3} {'strategy':<36} {'source':>8} {'1 step':>8} {'total':>8} {'workloads':>10}")
    for s in counted:
        n = s.name
        print(f"{s.number:>3} {n:<36} {source_sites[n]:>8} {step_sites[n]:>8} "
              f"{source_sites[n] + step_sites[n]:>8} {programs[n]:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
