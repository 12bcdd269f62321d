"""Are generated steps worth learning? The figures issue #40 asks of a seeded run over the suite.

Usage: ``python bench/step_worth.py [--per-class K] [--seed S] [--depth D] [--breadth-cap B]
[--max-steps-per-state M] [--workers N] [--no-time] [--folder DIR]``.

Draws the same seeded sample as ``bench/generate.py`` (``--per-class`` workloads per level and size
class: 24 by default, both levels, small/medium/large), then runs the user's commands on it, printing each:

1. ``steptp generate`` at ``--depth`` with ``--time`` (a measured effect on every verified step);
2. ``steptp filter`` with the default policy (selection by benefit, negatives kept apart);
3. ``steptp render`` with the default format (one row per state, answering its best-ranked step);
4. ``steptp lint`` over the generated records, when the command exists.

and reports: the share of steps with an estimated effect and (timing on) with a measured verdict; the
verdicts of the steps the default SFT rows answer — the share that is slower, or neutral without a
credited follow-up (target at most 10 %); the per-strategy effect distribution before and after
filtering; and how many rationales are shared verbatim between records whose before-states or
strategies differ. Nothing here is tuned on: the sample is drawn by seed from the whole suite.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dataset.benefit import category, verdict  # noqa: E402
from dataset.filtering import DEFAULT, apply_policy, effects_table  # noqa: E402
from dataset.records import load_records  # noqa: E402
from dataset.rendering import answered_records  # noqa: E402


def steptp(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run one ``steptp`` command the way a user would, echoing it; output returned for parsing."""
    command = [sys.executable, "-m", "steptp_cli.main", *argv]
    print("$ steptp " + " ".join(argv), flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    print(f"  ({time.perf_counter() - start:.0f} s, exit {done.returncode})", flush=True)
    return done


def unexplained(record: dict) -> bool:
    """A row answer the issue counts against us: slower, or neutral without a credited follow-up."""
    kind = category(record)
    return kind == "slower" or kind == "neutral"


def shared_rationales(records: list[dict]) -> int:
    """Records whose rationale text another record has verbatim with a different before-state or strategy."""
    owners: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    for record in records:
        trace = record.get("trace") or {}
        text = (trace.get("rationale") or "").strip()
        if text:
            owners[text].add((record["parent"]["hash"], record["strategy"]))
    shared = {text for text, keys in owners.items() if len(keys) > 1}
    return sum(1 for r in records if ((r.get("trace") or {}).get("rationale") or "").strip() in shared)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--breadth-cap", type=int, default=2)
    parser.add_argument("--max-steps-per-state", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-time", action="store_true")
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "bench"))
    from generate import draw_sample  # the same seeded sample bench/generate.py measures throughput on

    folder = args.folder or Path(tempfile.mkdtemp(prefix="steptp-step-worth-"))
    folder.mkdir(parents=True, exist_ok=True)
    sample = [workload for workload, _class in draw_sample(args.per_class, args.seed)]
    print(f"sample ({len(sample)} workloads, seed {args.seed}): {' '.join(sample)}")
    steps, kept, rows = folder / "steps.jsonl", folder / "kept.jsonl", folder / "sft.jsonl"
    generate = ["generate", *sample, "--depth", str(args.depth), "--seed", str(args.seed),
                "--breadth-cap", str(args.breadth_cap),
                "--max-steps-per-state", str(args.max_steps_per_state),
                "--workers", str(args.workers), "--no-progress", "-o", str(steps)]
    if not args.no_time:
        generate.append("--time")
    for argv in (generate, ["filter", str(steps), "-o", str(kept), "--negatives", str(folder / "neg.jsonl")],
                 ["render", str(kept), "-o", str(rows)]):
        done = steptp(*argv)
        if done.returncode != 0:
            sys.exit(f"failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")

    records = list(load_records(steps))
    verified = [r for r in records if r["status"] == "verified"]
    estimated = sum(1 for r in records if (r.get("effect") or {}).get("estimate"))
    measured = sum(1 for r in verified if (r.get("effect") or {}).get("measured"))
    print(f"\nrecords {len(records)}, verified {len(verified)}")
    share = 100 * estimated / max(len(records), 1)
    print(f"with an estimated effect: {estimated}/{len(records)} ({share:.1f} %)")
    if not args.no_time:
        print(f"verified with a measured verdict: {measured}/{len(verified)} "
              f"({100 * measured / max(len(verified), 1):.1f} %; target >= 90 %)")
    print("verdicts of verified steps:", dict(collections.Counter(verdict(r) for r in verified)))

    kept_records = list(load_records(kept))
    answered = answered_records(kept_records)
    bad = sum(1 for r in answered if unexplained(r))
    row_count = sum(1 for _ in rows.open())
    print(f"\ndefault SFT export: {row_count} rows answering {len(answered)} steps; "
          f"categories {dict(collections.Counter(category(r) for r in answered))}")
    print("rows answering a slower step or a neutral one without a credited follow-up: "
          f"{bad}/{len(answered)} "
          f"({100 * bad / max(len(answered), 1):.1f} %; target <= 10 %)")
    print("\nper-strategy effect categories, generated>kept by the default filter:")
    print(effects_table(apply_policy(records, DEFAULT)))

    print("\nrecords sharing their rationale verbatim across states or strategies: "
          f"{shared_rationales(verified)} of {len(verified)} verified")
    distinct = len({((r.get('trace') or {}).get('rationale') or '') for r in verified})
    print(f"distinct rationales: {distinct} over {len(verified)} verified records")
    lint = steptp("lint", str(steps))
    if "invalid choice" in lint.stderr:
        print("steptp lint: not available at this revision")
    else:
        print(lint.stdout[-2000:] + lint.stderr[-2000:])
    print(f"files in {folder}")


if __name__ == "__main__":
    main()
