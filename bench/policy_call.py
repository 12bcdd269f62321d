"""How long one ``RulePolicy.propose`` call takes: the tuner's per-state price before it measures anything.

Usage: ``python bench/policy_call.py [--only ID ...] [--shape-t T] [--depth D] [--baseline REV]``

Per workload the source program (at point ``T`` of its default->paper shape path, as ``bench/tune.py``
runs it) is ranked, then the state its best proposal leads to, ``D`` times: a search's first calls,
in one process as a search makes them. Printed: seconds per call, the proposals made, and how many
such calls fit in ``bench/tune.py``'s 480 s per-workload budget. With ``--baseline REV`` the same
measurement runs at git revision ``REV`` (``bench/_revision.py``: a temporary worktree, this script
copied into it) in the same run, and each row gets the ratio ``REV seconds / these seconds`` beside a
check that both revisions ranked the same proposals in the same order with the same scores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._revision import rows_at_revision  # noqa: E402

#: Many-block level-2 programs (the search's slowest states) and a one-block level-1 one.
DEFAULT_WORKLOADS = ("level2/linear_attention_causal", "level2/gemm_batchnorm_eval_relu",
                     "level2/batchnorm_eval_relu_dropout", "level1/matvec")
SEARCH_BUDGET_S = 480.0


def measure(workload: str, shape_t: float, depth: int) -> list[dict]:
    """One row per call: seconds, proposals, and a digest of the ranking (to compare revisions)."""
    from frontend import translate_file
    from tuner.policies import RulePolicy
    from tuner.proposals import SearchContext
    from workloads.registry import get_workload
    from workloads.variants import scaled_shapes

    info = get_workload(workload)
    program = translate_file(info.path, sets=scaled_shapes(info, shape_t)).program
    policy = RulePolicy(seed=0, measured={}, target="llvm-host")
    rows = []
    for level in range(depth + 1):
        start = time.perf_counter()
        proposals = policy.propose(program, SearchContext())
        seconds = time.perf_counter() - start
        ranking = "\n".join(f"{p.strategy}|{p.step.site.key}|{sorted(p.step.params.items())}|{p.score:.12g}"
                            for p in proposals if p.step is not None)
        rows.append({"workload": workload, "call": level, "blocks": len(program.body.blocks),
                     "seconds": seconds, "proposals": len(proposals),
                     "ranking": hashlib.sha256(ranking.encode()).hexdigest()[:16]})
        if not proposals or proposals[0].step is None:
            break
        program = proposals[0].step.after
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="workload id(s) (default: four of the tune bench's)")
    parser.add_argument("--shape-t", type=float, default=0.5)
    parser.add_argument("--depth", type=int, default=1, help="calls after the source's (default 1)")
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV, in this run")
    parser.add_argument("--json", metavar="OUT.json")
    args = parser.parse_args(argv)
    workloads = args.only or list(DEFAULT_WORKLOADS)
    inner = [a for w in workloads for a in ("--only", w)] + ["--shape-t", str(args.shape_t),
                                                             "--depth", str(args.depth)]
    base = {}
    if args.baseline:
        base = {(r["workload"], r["call"]): r for r in rows_at_revision(__file__, args.baseline, inner)}
    rows = [row for workload in workloads for row in measure(workload, args.shape_t, args.depth)]
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return 0
    print(f"RulePolicy.propose, llvm-host, shapes at t={args.shape_t}; 'calls/480 s': calls that fit in "
          f"bench/tune.py's per-workload budget" + (f"; baseline {args.baseline}" if base else ""))
    print(f"{'workload':36} {'call':>4} {'blocks':>6} {'proposals':>9} {'s':>8} {'calls/480 s':>11}"
          + (f" {'base s':>8} {'speedup':>7}  same ranking" if base else ""))
    ratios = []
    for r in rows:
        line = (f"{r['workload']:36} {r['call']:4d} {r['blocks']:6d} {r['proposals']:9d} {r['seconds']:8.2f} "
                f"{SEARCH_BUDGET_S / r['seconds']:11.1f}")
        b = base.get((r["workload"], r["call"]))
        if b:
            ratios.append(b["seconds"] / r["seconds"])
            same = "yes" if b["ranking"] == r["ranking"] else "NO"
            line += f" {b['seconds']:8.2f} {ratios[-1]:7.2f}  {same}"
        print(line)
    if ratios:
        print(f"geomean speedup over {args.baseline}: "
              f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x over {len(ratios)} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
