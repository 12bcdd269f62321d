"""TVM build time per nesting depth, for the program shapes whose builds used to grow exponentially.

Usage: ``python bench/build_depth.py [--max-depth 24] [--exp-depth 12] [--repeat 2]``.

Three classes (issue 7): nested NaN-propagating ``max`` (each level's select names the level below
twice), the same ``min`` nest under a vectorised loop (per-lane bindings), and integer ``exp`` chains
(each level a saturating float → int conversion). For each depth it prints the best build time of
``--repeat`` builds (lower + ``tvm.compile``, llvm, no cache), the ratio to depth 1 measured in the same
run, the time per level, and the largest module TVM handles between its passes
(``tvm_adapter.peak_ir_size``, a load-independent figure). Linear growth shows as a roughly constant
time per level and a peak size that grows by a constant per level; the old lowering doubled (max) or
grew ~15x (exp) per level.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leir.checker import check
from leir.program import load_program
from verifier import tvm_adapter
from verifier.build import build
from verifier.lowering import lower

A = "A^{f32,g}_{i}"


HEAD = "input A: f32[64]\noutput C: f32[64]\n---\n"


def nested_max(n: int) -> str:
    return HEAD + f"L^{{64}}_{{i=0}}[C^{{f32,g}}_{{i}}={'max(1,' * n}{A}{')' * n};];"


def vector_min(n: int) -> str:
    body = f"{A}+1"
    for _ in range(n):
        body = f"min({A}*2,{body})"
    return HEAD + f"V^{{64}}_{{i=0}}[C^{{f32,g}}_{{i}}={body};];"


def int_exp(n: int) -> str:
    return ("input A: i32[64]\noutput C: i32[64]\n---\n"
            f"L^{{64}}_{{i=0}}[C^{{i32,g}}_{{i}}={'exp(' * n}A^{{i32,g}}_{{i}}{')' * n};];")


def _measure(text: str, repeat: int) -> tuple[float, int]:
    program = load_program(text)
    info = check(program)
    best = min(_timed(program, info) for _ in range(repeat))
    peak = tvm_adapter.peak_ir_size(lower(program, info=info).mod, {"kind": "llvm"})
    return best, peak


def _timed(program, info) -> float:
    start = time.perf_counter()
    build(program, "llvm", info=info, cache=False)
    return time.perf_counter() - start


def _depths(top: int) -> list[int]:
    return sorted({1, 2, 3, 4, 6, 8, 12, 16, 20, 24, top} & set(range(1, top + 1)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-depth", type=int, default=24, help="deepest max/min nest (default 24)")
    parser.add_argument("--exp-depth", type=int, default=12, help="longest integer exp chain (default 12)")
    parser.add_argument("--repeat", type=int, default=2, help="builds per depth; the best is kept")
    args = parser.parse_args(argv)
    classes = [("nested NaN max", nested_max, args.max_depth), ("vectorised min", vector_min, args.max_depth),
               ("integer exp chain", int_exp, args.exp_depth)]
    worst = 0.0
    _measure(nested_max(1), 1)  # warm-up: the first build in a process pays TVM's and LLVM's start-up
    for label, make, top in classes:
        print(f"\n{label}")
        print(f"{'depth':>5} {'build s':>9} {'x depth 1':>10} {'s/level':>8} {'peak IR':>9} {'IR/level':>9}")
        base_time, base_peak = _measure(make(1), args.repeat)
        for depth in _depths(top):
            seconds, peak = (base_time, base_peak) if depth == 1 else _measure(make(depth), args.repeat)
            ratio = seconds / base_time
            per_ir = (peak - base_peak) / (depth - 1) if depth > 1 else 0.0
            print(f"{depth:>5} {seconds:>9.3f} {ratio:>10.2f} {seconds / depth:>8.3f} {peak:>9} "
                  f"{per_ir:>9.0f}")
            if depth > 1:
                worst = max(worst, ratio / depth)
    print(f"\nlargest (time ratio to depth 1) / depth over the rows of depth > 1: {worst:.2f} "
          "(linear growth keeps it near or below 1; doubling per level reaches 2^d/d)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
