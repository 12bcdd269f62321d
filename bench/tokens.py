"""Token efficiency of LEIR over the compatibility corpus: LEIR vs TVM TIR vs generated CUDA.

For every corpus program: Qwen2.5 tokens of the canonical LEIR body, of the TIR our lowering produces for
cuda (``mod.script()``), and of the CUDA source TVM generates from it (kernel code without TVM's fixed
preamble; the full source is reported too). Prints a per-program table and the geometric means of the
ratios. Targets from the issue: LEIR/TIR <= 0.35, LEIR/CUDA <= 0.15.

    .venv/bin/python bench/tokens.py [--limit N] [--jobs 2] [--json out.json] [--quiet]

Builds every program for cuda (nvcc compiles here; nothing runs), so the full corpus takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.corpus import load_corpus
from verifier.tokens import TokenCounts, geomean, summary

TARGET_TIR = 0.35
TARGET_CUDA = 0.15


def _count(index: int) -> tuple[str, dict]:
    from verifier.tokens import program_tokens

    entry = load_corpus()[index]
    return entry.id, program_tokens(entry.program).to_json()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N corpus programs")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--json", metavar="PATH", help="also write the per-program counts as JSON")
    parser.add_argument("--quiet", action="store_true", help="only the summary, no per-program table")
    args = parser.parse_args(argv)

    count = len(load_corpus()) if args.limit is None else min(args.limit, len(load_corpus()))
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
        rows = list(pool.map(_count, range(count), chunksize=4))
    elapsed = time.perf_counter() - started
    counts = []
    for _, data in rows:
        fields = {k: data[k] for k in ("leir", "tir", "cuda", "cuda_full", "tir_target", "note")}
        counts.append(TokenCounts(**fields))

    if not args.quiet:
        print(f"{'program':52s} {'leir':>6s} {'tir':>7s} {'cuda':>7s} {'leir/tir':>9s} {'leir/cuda':>10s}")
        for (pid, _), c in zip(rows, counts, strict=True):
            cuda = "-" if c.cuda is None else str(c.cuda)
            per_cuda = "-" if c.leir_per_cuda is None else f"{c.leir_per_cuda:.3f}"
            print(f"{pid[-52:]:52s} {c.leir:6d} {c.tir:7d} {cuda:>7s} {c.leir_per_tir:9.3f} {per_cuda:>10s}")
    stats = summary(counts)
    tir_ratios = sorted(c.leir_per_tir for c in counts)
    print()
    print(f"programs: {stats['programs']} ({stats['with_cuda']} with cuda source), {elapsed:.0f} s")
    print(f"geomean LEIR/TIR   : {stats['geomean_leir_per_tir']:.3f}  (target <= {TARGET_TIR}; "
          f"median {tir_ratios[len(tir_ratios) // 2]:.3f}, worst {tir_ratios[-1]:.3f})")
    print(f"geomean LEIR/CUDA  : {stats['geomean_leir_per_cuda']:.3f}  (target <= {TARGET_CUDA}; "
          "kernel code, TVM preamble excluded)")
    print(f"geomean LEIR/CUDA* : {stats['geomean_leir_per_cuda_full']:.3f}  (* whole generated file)")
    print(f"total tokens       : leir {sum(c.leir for c in counts)}, tir {sum(c.tir for c in counts)}, "
          f"cuda {sum(c.cuda or 0 for c in counts)}")
    print(f"geomean tokens     : leir {geomean(c.leir for c in counts):.0f}, "
          f"tir {geomean(c.tir for c in counts):.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"programs": [{"id": pid, **data} for pid, data in rows],
                                               "summary": stats}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
