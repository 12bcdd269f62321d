"""Site counts of the loop-level strategies over the built-in suite (level1+level2, f32) and the corpus.

Prints one row per strategy: candidate sites over the built-in workloads and over the 388 corpus
programs, plus with ``--apply`` how many (site, first parameters) steps pass the gates of
``apply_strategy`` (valid result, grounded trace). A candidate that raises or fails is listed with why.

    .venv/bin/python bench/loop_sites.py [--apply] [--strategies loop_split,loop_fusion]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.analysis import program_info
from leir.corpus import load_corpus
from strategies import all_strategies
from strategies.traces import grounding_problems


def builtin_programs():
    from frontend import translate_file
    from workloads.registry import list_workloads

    for info in list_workloads():
        try:
            yield info.id, translate_file(info.path, dtype="f32").program
        except Exception as exc:
            print(f"skip {info.id}: {type(exc).__name__}: {exc}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="apply every site with its first parameters")
    parser.add_argument("--max-sites", type=int, default=0,
                        help="with --apply: at most this many sites per program and strategy (0: all)")
    parser.add_argument("--strategies", default="", help="comma-separated names (default: the loop level)")
    args = parser.parse_args()
    chosen = [s for s in all_strategies("loop")
              if not args.strategies or s.name in args.strategies.split(",")]
    suites = {"builtin": list(builtin_programs()),
              "corpus": [(e.id, e.program) for e in load_corpus()]}
    failures = []
    counts: dict[tuple[str, str], list[int]] = {}
    start = time.perf_counter()
    for suite, programs in suites.items():
        for pid, program in programs:
            for strategy in chosen:
                try:
                    sites = strategy.candidates(program)
                except Exception as exc:
                    failures.append(f"{suite} {pid} {strategy.name} candidates: {exc!r}")
                    continue
                row = counts.setdefault((strategy.name, suite), [0, 0, 0])
                row[0] += len(sites)
                row[1] += bool(sites)
                if args.apply:
                    limit = args.max_sites or len(sites)
                    for index, site in enumerate(sites[:limit]):
                        # the engine's gates without re-listing the candidates for every site
                        try:
                            after = strategy.apply(program, site, strategy.default_params(site))
                            problems = program_info(after).errors
                            if problems:
                                raise ValueError(f"invalid result: {problems[0]}")
                            trace = strategy.explain(program, site, strategy.default_params(site), after)
                            grounding = grounding_problems(trace, program, after)
                            if grounding:
                                raise ValueError(f"ungrounded trace: {grounding[0]}")
                            row[2] += 1
                        except Exception as exc:
                            failures.append(f"{suite} {pid} {strategy.name} site {index}: {exc!r}")
    sizes = {k: len(v) for k, v in suites.items()}
    print(f"programs: builtin {sizes['builtin']}, corpus {sizes['corpus']}  "
          f"({time.perf_counter() - start:.1f} s)")
    print(f"{'#':>3} {'strategy':<26} {'builtin sites':>13} {'(programs)':>10} {'corpus sites':>12} "
          f"{'(programs)':>10}" + (f" {'applied ok':>10}" if args.apply else ""))
    for strategy in chosen:
        b = counts.get((strategy.name, "builtin"), [0, 0, 0])
        c = counts.get((strategy.name, "corpus"), [0, 0, 0])
        line = f"{strategy.number:>3} {strategy.name:<26} {b[0]:>13} {b[1]:>10} {c[0]:>12} {c[1]:>10}"
        print(line + (f" {b[2] + c[2]:>10}" if args.apply else ""))
    for failure in failures[:50]:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
