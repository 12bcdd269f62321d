"""Count each strategy's candidate sites over the built-in suite and the corpus, and apply every one.

    python scripts/strategy_sites.py --level memory              # suite (level1+level2, f32) and corpus
    python scripts/strategy_sites.py --level memory --no-corpus --build llvm --build cuda --per-program 3
                                                                 # also lower + build suite steps
    python scripts/strategy_sites.py --level graph --keep-dead --no-apply
                                                                 # suite translated keeping dead blocks

For every candidate (with its first legal parameters) the step goes through ``apply_strategy`` — so the
result passes the checker and its trace is grounded — and a raise anywhere is printed and counted. The
table is what docs/strategies.md quotes per strategy. With ``--keep-dead`` the suite is translated
keeping blocks the model computes but never uses (the natural source of dead_code_elimination sites).
Exits 1 when anything raised.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.ast import Program
from strategies import all_strategies, apply_strategy


def suite_programs(dtype: str = "f32", keep_dead: bool = False) -> list[tuple[str, Program]]:
    from workloads.registry import source_programs

    return source_programs(dtype, keep_dead_blocks=keep_dead)


def corpus_programs() -> list[tuple[str, Program]]:
    from leir.corpus import load_corpus

    return [(entry.id, entry.program) for entry in load_corpus()]


def _spread(count: int, limit: int | None) -> list[int]:
    """``limit`` site indices spread evenly over ``count`` (all of them without a limit)."""
    if limit is None or count <= limit:
        return list(range(count))
    return sorted({round(k * (count - 1) / max(1, limit - 1)) for k in range(limit)})


def scan(name: str, programs: list[tuple[str, Program]], strategies: list, *, apply: bool,
         build: tuple[str, ...], per_program: int | None = None) -> int:
    """Print the table; return how many candidates/applies/builds raised."""
    sites: Counter[str] = Counter()
    programs_with: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    start = time.time()
    parent_fails: Counter[str] = Counter()
    for pid, program in programs:
        targets = []
        for target in build:  # a target the source program itself does not build for proves nothing
            try:
                from verifier.build import build as build_kernel

                build_kernel(program, target, cache=False)
                targets.append(target)
            except Exception as exc:
                parent_fails[target] += 1
                print(f"SKIP {target} for {pid}: the source does not build: {exc}"[:300])
        for strategy in strategies:
            try:
                found = strategy.candidates(program)
            except Exception as exc:
                failures[strategy.name] += 1
                print(f"RAISE candidates {strategy.name} {pid}: {exc!r}")
                continue
            sites[strategy.name] += len(found)
            programs_with[strategy.name] += bool(found)
            if not apply:
                continue
            for index in _spread(len(found), per_program):
                try:
                    step = apply_strategy(program, strategy, index)
                    for target in targets:
                        from verifier.build import build as build_kernel

                        build_kernel(step.after, target, cache=False)
                except Exception as exc:
                    failures[strategy.name] += 1
                    print(f"FAIL {strategy.name} {pid} site {index}: {type(exc).__name__}: {exc}"[:400])
    print(f"\n{name}: {len(programs)} programs, {time.time() - start:.0f} s")
    for target, count in sorted(parent_fails.items()):
        print(f"{count} source program(s) do not build for {target}; their steps were not built for it")
    print(f"{'#':>3} {'strategy':<24} {'sites':>7} {'programs':>9} {'failures':>9}")
    for strategy in strategies:
        n = strategy.name
        print(f"{strategy.number:>3} {n:<24} {sites[n]:>7} {programs_with[n]:>9} {failures[n]:>9}")
    return sum(failures.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", help="only the strategies of this level (graph, loop, memory, math)")
    parser.add_argument("--strategy", action="append", help="only this strategy (repeatable)")
    parser.add_argument("--no-apply", action="store_true", help="count sites without applying them")
    parser.add_argument("--build", action="append", default=[], help="also build every suite step for TARGET")
    parser.add_argument("--per-program", type=int, help="apply at most N sites per program and strategy")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--no-suite", action="store_true")
    parser.add_argument("--dtype", default="f32", help="translate the suite in this dtype")
    parser.add_argument("--keep-dead", action="store_true", help="keep blocks the model never uses")
    args = parser.parse_args()
    strategies = [s for s in all_strategies(args.level) if not args.strategy or s.name in args.strategy]
    raised = 0
    if not args.no_suite:
        label = f"built-in suite ({args.dtype}{', dead blocks kept' if args.keep_dead else ''})"
        raised += scan(label, suite_programs(args.dtype, args.keep_dead), strategies,
                       apply=not args.no_apply, build=tuple(args.build), per_program=args.per_program)
    if not args.no_corpus:
        raised += scan("corpus", corpus_programs(), strategies, apply=not args.no_apply, build=())
    return 1 if raised else 0


if __name__ == "__main__":
    raise SystemExit(main())
