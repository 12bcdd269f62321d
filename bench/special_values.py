"""Special-values sweep: how many workloads and small corpus programs still pass with edge-value inputs.

Usage: ``python bench/special_values.py [--workloads K] [--corpus K] [--dtypes f32,f64] [--seed S]``.

Not a speed benchmark: a pass count. ``--workloads K`` picks K built-in workloads evenly spread over the
sorted registry, translates each (``translate_file``, as ``steptp translate`` does) in every dtype and
verifies it with ``special_values=True`` against its PyTorch source (as ``steptp verify --special-values
--source X.py`` does). ``--corpus K`` verifies the K smallest corpus programs (by statement executions)
with special values against the LEIR interpreter. Each failure is printed with its outcome and error, so
a regression can be read off directly.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.corpus import load_corpus  # noqa: E402
from leir.frontend import translate_file  # noqa: E402
from verifier import verify as verify_mod  # noqa: E402
from verifier.reference import TorchSourceReference, iteration_count  # noqa: E402
from verifier.sandbox import WorkerPool  # noqa: E402
from verifier.verify import verify  # noqa: E402
from workloads.registry import list_workloads  # noqa: E402

PASSING = {"pass", "equal_pass"}


def pick_workloads(count: int):
    every = sorted(list_workloads(), key=lambda w: w.id)
    if count >= len(every):
        return every
    step = len(every) / count
    return [every[int(k * step)] for k in range(count)]


def sweep_workloads(count: int, dtypes: list[str], seed: int, pool: WorkerPool) -> Counter:
    tally: Counter = Counter()
    for workload in pick_workloads(count):
        for dtype in dtypes:
            try:
                translation = translate_file(Path(workload.path), dtype=dtype)
            except Exception as exc:  # noqa: BLE001 - a sweep reports, it does not stop
                tally[(dtype, "translate_error")] += 1
                print(f"{dtype} {workload.id}: translate failed: {type(exc).__name__}: {exc}"[:300])
                continue
            reference = TorchSourceReference(workload.path, {}, dtype)
            result = verify(translation.program, special_values=True, seed=seed, reference=reference,
                            params=translation.values, cache=False, pool=pool)
            outcome = result.outcome.value
            tally[(dtype, outcome)] += 1
            if outcome not in PASSING:
                print(f"{dtype} {workload.id}: {outcome}: {(result.error or '')[:300]}")
    return tally


def sweep_corpus(count: int, seed: int, pool: WorkerPool) -> Counter:
    tally: Counter = Counter()
    entries = sorted(load_corpus(), key=lambda e: (iteration_count(e.program), e.id))[:count]
    for entry in entries:
        result = verify(entry.program, special_values=True, seed=seed, cache=False, pool=pool)
        dtype = entry.program.signature.by_role("output")[0].dtype
        outcome = result.outcome.value
        tally[(dtype, outcome)] += 1
        if outcome not in PASSING:
            print(f"corpus {entry.id} ({dtype}): {outcome}: {(result.error or '')[:300]}")
    return tally


def _report(title: str, tally: Counter) -> None:
    for dtype in sorted({d for d, _ in tally}):
        total = sum(n for (d, _), n in tally.items() if d == dtype)
        passed = sum(n for (d, o), n in tally.items() if d == dtype and o in PASSING)
        rest = ", ".join(f"{o} {n}" for (d, o), n in sorted(tally.items()) if d == dtype and o not in PASSING)
        print(f"{title} {dtype}: {passed}/{total} pass" + (f" ({rest})" if rest else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=30)
    parser.add_argument("--corpus", type=int, default=40)
    parser.add_argument("--dtypes", default="f32,f64")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    pool = WorkerPool(1, warm_modules=verify_mod.WARM_MODULES + ("torch",))
    with tempfile.TemporaryDirectory():
        try:
            workloads = sweep_workloads(args.workloads, args.dtypes.split(","), args.seed, pool) \
                if args.workloads else Counter()
            corpus = sweep_corpus(args.corpus, args.seed, pool) if args.corpus else Counter()
        finally:
            pool.close()
    _report("workloads", workloads)
    _report("corpus", corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
