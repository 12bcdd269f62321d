"""Special-values sweep: how many workloads and small corpus programs still pass with edge-value inputs.

Usage: ``python bench/special_values.py [--all | --workloads K --corpus K] [--match TEXT ...]
[--dtypes f32,f64] [--seed S]``.

Not a speed benchmark: a pass count. ``--workloads K`` picks K built-in workloads evenly spread over the
sorted registry, translates each (``translate_file``, as ``steptp translate`` does) in every dtype and
verifies it with ``special_values=True`` against its PyTorch source (as ``steptp verify --special-values
--source X.py`` does). ``--corpus K`` verifies the K smallest corpus programs (by statement executions)
with special values against the LEIR interpreter (each corpus row has its own dtype, so ``--dtypes``
filters them). ``--all`` is the full sweep: every workload in every dtype and every corpus program.
``--match`` keeps only the ids containing one of the given texts (to re-run the failures of a sweep).
Each item prints one line as it finishes (failures with their outcome and error, so a regression can be
read off directly); the per-set, per-dtype pass counts come last. A corpus program too large to interpret
(above ``INTERPRETER_MAX_ITERATIONS``) has nothing to be compared with (its outcome would be ``execute``):
it is counted apart from the failures and, unless ``--run-large``, not run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frontend import translate_file
from leir.corpus import load_corpus
from verifier import verify as verify_mod
from verifier.reference import INTERPRETER_MAX_ITERATIONS, TorchSourceReference, iteration_count
from verifier.sandbox import WorkerPool
from verifier.verify import verify
from workloads.registry import list_workloads

PASSING = {"pass", "equal_pass"}
NOT_COMPARED = {"execute"}


def _matches(item_id: str, match: list[str]) -> bool:
    return not match or any(text in item_id for text in match)


def pick_workloads(count: int, match: list[str] | None = None):
    every = [w for w in sorted(list_workloads(), key=lambda w: w.id) if _matches(w.id, match or [])]
    if count >= len(every):
        return every
    step = len(every) / count
    return [every[int(k * step)] for k in range(count)]


def _reason(result) -> str:
    """Why a result is not a pass: the error, else each failing output's mismatch counts, else the notes."""
    if result.error:
        return result.error[:300]
    bad = [f"{name}: {c['mismatches']} mismatches, {c['nonfinite_mismatches']} NaN/inf-pattern "
           f"mismatches of {c['size']}, first at {c['first_bad_index']}, worst ratio {c['error_ratio']:.3g}"
           for name, c in sorted(result.outputs.items()) if not c.get("ok", True)]
    return "; ".join(bad) or "; ".join(result.notes)[:300]


def _line(kind: str, item: str, dtype: str, result, started: float) -> None:
    outcome = result.outcome.value
    tail = "" if outcome in PASSING else f": {_reason(result)}"
    print(f"{kind} {dtype} {item}: {outcome} ({time.perf_counter() - started:.1f}s){tail}", flush=True)


def sweep_workloads(count: int, dtypes: list[str], seed: int, pool: WorkerPool,
                    match: list[str] | None = None) -> Counter:
    tally: Counter = Counter()
    for workload in pick_workloads(count, match):
        for dtype in dtypes:
            started = time.perf_counter()
            try:
                translation = translate_file(Path(workload.path), dtype=dtype)
            except Exception as exc:
                tally[(dtype, "translate_error")] += 1
                print(f"workload {dtype} {workload.id}: translate_error: {type(exc).__name__}: {exc}"[:300],
                      flush=True)
                continue
            reference = TorchSourceReference(workload.path, {}, dtype)
            result = verify(translation.program, special_values=True, seed=seed, reference=reference,
                            params=translation.values, cache=False, pool=pool)
            tally[(dtype, result.outcome.value)] += 1
            _line("workload", workload.id, dtype, result, started)
    return tally


def sweep_corpus(count: int, dtypes: list[str], seed: int, pool: WorkerPool,
                 match: list[str] | None = None, run_large: bool = False) -> Counter:
    tally: Counter = Counter()
    entries = [e for e in load_corpus() if _matches(e.id, match or [])
               and e.dtype in dtypes]
    for entry in sorted(entries, key=lambda e: (iteration_count(e.program), e.id))[:count]:
        started = time.perf_counter()
        dtype = entry.dtype
        if not run_large and iteration_count(entry.program) > INTERPRETER_MAX_ITERATIONS:
            tally[(dtype, "execute")] += 1  # nothing to compare it with: not run (``--run-large`` does)
            continue
        result = verify(entry.program, special_values=True, seed=seed, cache=False, pool=pool)
        tally[(dtype, result.outcome.value)] += 1
        _line("corpus", entry.id, dtype, result, started)
    return tally


def _report(title: str, tally: Counter) -> None:
    for dtype in sorted({d for d, _ in tally}):
        total = sum(n for (d, _), n in tally.items() if d == dtype)
        passed = sum(n for (d, o), n in tally.items() if d == dtype and o in PASSING)
        unchecked = sum(n for (d, o), n in tally.items() if d == dtype and o in NOT_COMPARED)
        rest = ", ".join(f"{o} {n}" for (d, o), n in sorted(tally.items())
                         if d == dtype and o not in PASSING | NOT_COMPARED)
        print(f"{title} {dtype}: {passed}/{total} pass"
              + (f", {unchecked} not compared (too large to interpret)" if unchecked else "")
              + (f" (failed: {rest})" if rest else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=30)
    parser.add_argument("--corpus", type=int, default=40)
    parser.add_argument("--all", action="store_true", help="every workload and every corpus program")
    parser.add_argument("--match", nargs="*", default=[], help="only ids containing one of these texts")
    parser.add_argument("--run-large", action="store_true",
                        help="also run corpus programs too large to interpret (nothing to compare: execute)")
    parser.add_argument("--dtypes", default="f32,f64")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.all:
        args.workloads = args.corpus = 10**9
    dtypes = args.dtypes.split(",")
    pool = WorkerPool(1, warm_modules=verify_mod.WARM_MODULES + ("torch",))
    with tempfile.TemporaryDirectory():
        try:
            workloads = sweep_workloads(args.workloads, dtypes, args.seed, pool, args.match) \
                if args.workloads else Counter()
            corpus = sweep_corpus(args.corpus, dtypes, args.seed, pool, args.match, args.run_large) \
                if args.corpus else Counter()
        finally:
            pool.close()
    _report("workloads", workloads)
    _report("corpus", corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
