"""What fused multiply-add buys and costs: ``llvm-host`` (FMA off) against ``llvm-native`` (FMA on).

Usage: ``python bench/fma.py [--size M,K,N] [--survey P]``.

1. **Rate.** The 6x16 register-tile GEMM the tuner's recipe ends in (``tuner/policies/register_tile.py``),
   written in LEIR with the local accumulator, built for both targets and timed as the verifier times
   kernels (``verifier.timing.time_kernels``: interleaved repeats), next to ``torch.matmul`` (MKL/oneDNN)
   on the same arrays (``verifier.timing.time_callable``). Printed: ms and GFLOP/s of each, and the
   ratios native/host and native/eager. Both builds are checked against ``A @ B``.
2. **Bits** (``--survey P``, 0 to skip). Over ``P`` programs of the suite (every n-th, f32, default
   shapes), every exact strategy's first two steps with one parameter choice: built for ``llvm-native``,
   does the step's output keep the parent's bits (its equal pass)? Printed per strategy: kept / lost.
   On ``llvm-host`` every exact step keeps them; with FMA a product fused into the add that uses it
   rounds once, so a step that moves the two apart or together can change the last bit.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from leir.program import load_program

TARGETS = ("llvm-host", "llvm-native")
ROWS, LANES = 6, 16


def register_tile(m: int, k: int, n: int) -> str:
    """``C = A @ B`` as the recipe's tile: 6 rows by 16 lanes accumulated in a local buffer over all of K."""
    if m % ROWS or n % LANES:
        raise SystemExit(f"--size: M must divide by {ROWS} and N by {LANES}")
    return f"""input A: f32[{m}, {k}]
input B: f32[{k}, {n}]
output C: f32[{m}, {n}]
---
B^{{{m // ROWS}}}_{{bx=0}}L^{{{n // LANES}}}_{{e=0}}[
  L^{{{ROWS}}}_{{g=0}}L^{{{LANES}}}_{{h=0}}[H^{{f32,l}}_{{bx,g,h}}=0;];
  L^{{{k}}}_{{c=0}}U^{{{ROWS}}}_{{d=0}}V^{{{LANES}}}_{{f=0}}[H^{{f32,l}}_{{bx,d,f}}=H^{{f32,l}}_{{bx,d,f}}+A^{{f32,g}}_{{bx*{ROWS}+d,c}}*B^{{f32,g}}_{{c,e*{LANES}+f}};];
  L^{{{ROWS}}}_{{g=0}}L^{{{LANES}}}_{{h=0}}[C^{{f32,g}}_{{bx*{ROWS}+g,e*{LANES}+h}}=H^{{f32,l}}_{{bx,g,h}};];
];
"""


def rate(m: int, k: int, n: int, repeats: int) -> None:
    import torch

    from verifier.build import build
    from verifier.cpu_share import alone
    from verifier.sandbox import kernel_threads
    from verifier.timing import time_callable, time_kernels

    # as a sandbox worker does: TVM's own default pool is half the logical CPUs on x86-64
    os.environ["TVM_NUM_THREADS"] = str(kernel_threads())
    program = load_program(register_tile(m, k, n))
    rng = np.random.default_rng(0)
    arrays = {"A": rng.standard_normal((m, k), dtype=np.float32),
              "B": rng.standard_normal((k, n), dtype=np.float32)}
    expected = arrays["A"].astype(np.float64) @ arrays["B"].astype(np.float64)
    kernels = [build(program, target, cache=False) for target in TARGETS]
    for target, kernel in zip(TARGETS, kernels, strict=True):
        error = float(np.abs(kernel.run(arrays)["C"] - expected).max())
        if error > 1e-3 * np.sqrt(k):
            raise SystemExit(f"{target}: max abs error {error:.3g} against A @ B")
    torch.set_num_threads(kernel_threads())
    a, b = torch.from_numpy(arrays["A"]), torch.from_numpy(arrays["B"])
    with alone():
        timed = time_kernels(kernels, arrays, repeats=repeats, min_repeat_ms=50.0)
        eager = time_callable(lambda: torch.matmul(a, b), repeats=repeats, min_repeat_ms=50.0)
    flops = 2 * m * k * n
    seconds = {**{t: s.median for t, s in zip(TARGETS, timed, strict=True)}, "eager": eager.median}
    print(f"register-tile GEMM {m}x{k} by {k}x{n}, {kernel_threads()} threads, median of {repeats} repeats")
    for name, value in seconds.items():
        print(f"  {name:12} {value * 1e3:8.3f} ms  {flops / value / 1e9:7.1f} GFLOP/s")
    print(f"  llvm-native / llvm-host speedup {seconds['llvm-host'] / seconds['llvm-native']:.2f}x, "
          f"llvm-native / eager {seconds['eager'] / seconds['llvm-native']:.2f}x")


def survey(programs: int) -> None:
    from dataset.planning import param_choices
    from strategies.base import Exactness
    from strategies.registry import all_strategies
    from tuner.policies.base import strategy_steps
    from verifier.build import build
    from verifier.inputs import make_inputs
    from workloads.registry import source_programs

    suite = source_programs("f32")
    chosen = suite[::max(1, len(suite) // programs)][:programs]
    kept: collections.Counter = collections.Counter()
    lost: dict[str, list[str]] = collections.defaultdict(list)
    for workload_id, program in chosen:
        arrays = make_inputs(program, seed=3)
        parent = build(program, "llvm-native", cache=False).run(arrays)
        for strategy in all_strategies():
            steps = (step for step in strategy_steps(strategy, program,
                                                     lambda site: param_choices(site, 1, random.Random(0)))
                     if step.exactness == Exactness.E)
            for step, _ in zip(steps, range(2), strict=False):
                try:
                    child = build(step.after, "llvm-native", cache=False).run(arrays)
                except Exception as exc:
                    print(f"  {workload_id}: {strategy.name} did not build: {type(exc).__name__}",
                          file=sys.stderr)
                    continue
                if all(child[name].tobytes() == parent[name].tobytes() for name in parent):
                    kept[strategy.name] += 1
                else:
                    lost[strategy.name].append(workload_id)
    print(f"exact steps on llvm-native over {len(chosen)} suite programs: bits kept / lost")
    for name in sorted(set(kept) | set(lost)):
        more = ", ..." if len(lost[name]) > 3 else ""
        where = f"  ({', '.join(lost[name][:3])}{more})" if lost[name] else ""
        print(f"  {name:40} {kept[name]:4d} / {len(lost[name]):<4d}{where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="96,1600,1664", help="M,K,N of the GEMM (default 96,1600,1664)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--survey", type=int, default=30, metavar="P",
                        help="suite programs whose exact steps are checked for kept bits (0: skip)")
    args = parser.parse_args(argv)
    m, k, n = (int(v) for v in args.size.split(","))
    rate(m, k, n, args.repeats)
    if args.survey:
        survey(args.survey)
    return 0


if __name__ == "__main__":
    sys.exit(main())
