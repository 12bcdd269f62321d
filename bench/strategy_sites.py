"""Candidate sites per strategy over the built-in workloads and over the public corpus.

Usage: ``python bench/strategy_sites.py [--level graph] [--dtype f32] [--keep-dead] [--apply N]``.

For every registered strategy (optionally of one level) counts the candidate sites on the source
state of every built-in workload (level1 + level2, translated by the frontend in ``--dtype``) and on
every program of the compatibility corpus, and how many programs have at least one site. With
``--keep-dead`` the workloads are translated keeping blocks the model computes but never uses (the
natural source of dead_code_elimination sites). ``--apply N`` also applies the first N candidates of
each strategy on each program through ``apply_strategy`` (the checker runs on every result) and
reports failures. Nothing here may raise: a raising ``candidates`` is printed as a failure.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.corpus import load_corpus  # noqa: E402
from leir.strategies import all_strategies, apply_strategy, candidates  # noqa: E402


def builtin_programs(dtype: str, keep_dead: bool):
    from workloads.registry import source_programs

    return source_programs(dtype, keep_dead_blocks=keep_dead)


def count(programs, strategies, apply_n: int) -> tuple[Counter, Counter, list[str]]:
    sites, hit, failures = Counter(), Counter(), []
    for pid, program in programs:
        for strategy in strategies:
            try:
                found = candidates(program, strategy)
            except Exception as exc:  # noqa: BLE001
                failures.append(f"{pid} {strategy.name} candidates: {type(exc).__name__}: {exc}")
                continue
            sites[strategy.name] += len(found)
            hit[strategy.name] += bool(found)
            for index in range(min(apply_n, len(found))):
                try:
                    apply_strategy(program, strategy, index)
                except Exception as exc:  # noqa: BLE001
                    failures.append(f"{pid} {strategy.name} site {index}: {type(exc).__name__}: {exc}")
    return sites, hit, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default=None)
    parser.add_argument("--dtype", default="f32")
    parser.add_argument("--keep-dead", action="store_true")
    parser.add_argument("--apply", type=int, default=0)
    args = parser.parse_args()
    strategies = all_strategies(args.level)
    start = time.perf_counter()
    builtin = list(builtin_programs(args.dtype, args.keep_dead))
    corpus = [(e.id, e.program) for e in load_corpus()]
    b_sites, b_hit, b_fail = count(builtin, strategies, args.apply)
    c_sites, c_hit, c_fail = count(corpus, strategies, args.apply)
    print(f"{'strategy':40} {'built-in sites':>15} {'(programs)':>11} "
          f"{'corpus sites':>13} {'(programs)':>11}")
    for s in strategies:
        print(f"{s.number:>2} {s.name:37} {b_sites[s.name]:>15} {b_hit[s.name]:>11} "
              f"{c_sites[s.name]:>13} {c_hit[s.name]:>11}")
    print(f"{len(builtin)} built-in programs ({args.dtype}{', dead blocks kept' if args.keep_dead else ''}), "
          f"{len(corpus)} corpus programs, {time.perf_counter() - start:.1f} s")
    for line in b_fail + c_fail:
        print("FAIL", line)
    if b_fail or c_fail:
        sys.exit(1)


if __name__ == "__main__":
    main()
