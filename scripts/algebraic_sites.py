"""Count the algebraic rewrites' (#24–35) sites over the built-in suite at depth ≤ 2.

    python scripts/algebraic_sites.py                       # level1+level2, f32
    python scripts/algebraic_sites.py --verify 3            # also verify 3 distinct rewrites per strategy

A step at depth ≤ 2 starts from a source state (depth 0) or from a state one step away (depth 1). The
depth-1 states counted here are every ``compute_inline`` child (where larger expressions appear) and
every child of the twelve algebraic rewrites themselves (where the inverse rewrites find their input,
as generation does). A site is counted once per *distinct rewrite* — the workload, the statement before
and the statement after — so a site of the source that every child state also has counts once. Every
site is applied through ``apply_strategy`` (checker and trace grounding); ``--verify N`` builds and
verifies N of them per strategy with TVM against their parent.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.ast import Program
from leir.printer import canonical
from leir.rewrite import item_at
from strategies import AppliedStep, apply_strategy, candidates

NAMES = ("factorization", "expand_factorization", "cancellation", "expand_cancellation", "apart", "together",
         "powsimp", "expand_powsimp", "expand_log", "logsimp", "collect", "expand_collect")


def suite(dtype: str) -> list[tuple[str, Program]]:
    from workloads.registry import source_programs

    return source_programs(dtype)


def children(program: Program) -> list[Program]:
    """The depth-1 states: every compute_inline child and every algebraic rewrite's child."""
    out = []
    for name in ("compute_inline", *NAMES):
        for index in range(len(candidates(program, name))):
            out.append(apply_strategy(program, name, index).after)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="f32")
    parser.add_argument("--verify", type=int, default=0, help="verify N distinct rewrites per strategy")
    parser.add_argument("--workload", action="append", help="only this workload id (repeatable)")
    args = parser.parse_args()
    start = time.time()
    source: dict[str, int] = defaultdict(int)
    distinct: dict[str, dict[tuple[str, str, str], AppliedStep]] = defaultdict(dict)
    workloads: dict[str, set[str]] = defaultdict(set)
    failures = 0
    programs = [(w, p) for w, p in suite(args.dtype) if not args.workload or w in args.workload]
    for wid, program in programs:
        for depth, state in enumerate([program, *children(program)]):
            for name in NAMES:
                for index in range(len(candidates(state, name))):
                    try:
                        step = apply_strategy(state, name, index)
                    except Exception as exc:
                        failures += 1
                        print(f"FAIL {wid} {name} site {index}: {type(exc).__name__}: {exc}"[:300])
                        continue
                    key = (wid, canonical(item_at(step.before.body, step.site.path)),
                           canonical(item_at(step.after.body, step.site.path)))
                    distinct[name].setdefault(key, step)
                    workloads[name].add(wid)
                    source[name] += depth == 0
    print(f"{len(programs)} workloads ({args.dtype}), {time.time() - start:.0f} s, {failures} failures")
    print(f"{'strategy':22s} {'source sites':>12s} {'distinct rewrites depth<=2':>27s} {'workloads':>10s}"
          + ("  verified" if args.verify else ""))
    for name in NAMES:
        line = f"{name:22s} {source[name]:12d} {len(distinct[name]):27d} {len(workloads[name]):10d}"
        if args.verify:
            from verifier.verify import verify

            outcomes = [verify(s.after, parent=s.before, reference="parent", cache=False).outcome.value
                        for s in list(distinct[name].values())[: args.verify]]
            line += "  " + ",".join(outcomes)
        print(line)


if __name__ == "__main__":
    main()
