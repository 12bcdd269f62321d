"""Frontend coverage and speed over the built-in workloads.

Usage: ``python bench/frontend.py [--dtype f32|f64] [--no-verify] [--match TEXT]``, or
``python bench/frontend.py --build-scaling [--depths 4,8,16,32]``.

For every workload in ``workloads/``: translate it (trace, emit, check), and unless ``--no-verify``
build the program for ``llvm``, run it on the file's own inputs and compare with eager PyTorch
(``verifier.compare``). Prints

* a coverage table per level: workloads, translated, verified;
* the operators met (fx targets) with how many workloads use each;
* translation time per workload, and as a ratio against a baseline measured in the same run on the
  same model: plain ``torch.fx.symbolic_trace`` followed by one eager forward (what any fx-based
  converter has to do before emitting anything), so the figure survives a noisy shared machine.

``--build-scaling`` instead translates a stack of ``depth`` conv + batch-norm + ReLU6 blocks with a
residual (MobileNet-like) for each depth and builds it for llvm twice: as one function, and split into
parts (``verifier.split_build``); it prints both build times against the number of top-level blocks and
their ratio, so the growth of each (superlinear vs linear) shows in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from frontend.loading import load_source
from frontend.translate import translate_module
from workloads.registry import list_workloads


def baseline_seconds(model, inputs) -> float:
    start = time.perf_counter()
    # shape-branching models cannot be traced: their baseline is then the forward alone
    with contextlib.suppress(Exception):
        torch.fx.symbolic_trace(model)
    with torch.no_grad():
        model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    return time.perf_counter() - start


class _Stack(torch.nn.Module):
    """``depth`` MobileNet-like blocks: depthwise 3x3 conv, batch norm, ReLU6, pointwise conv, residual."""

    def __init__(self, depth: int, channels: int = 8) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(torch.nn.Sequential(
            torch.nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False),
            torch.nn.BatchNorm2d(channels), torch.nn.ReLU6(), torch.nn.Conv2d(channels, channels, 1))
            for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x


def build_scaling(depths: list[int]) -> int:
    from verifier.build import build

    print("Build time against program length (llvm; one function vs split into parts)")
    print(f"  {'depth':>6}{'blocks':>8}{'whole s':>10}{'split s':>10}{'parts':>7}{'whole/split':>13}"
          f"{'split ms/block':>16}")
    for depth in depths:
        torch.manual_seed(0)
        model = _Stack(depth).eval()
        program = translate_module(model, [torch.randn(1, 8, 8, 8)]).program
        blocks = len(program.body.blocks)
        start = time.perf_counter()
        build(program, "llvm", split=0, cache=False)
        whole = time.perf_counter() - start
        start = time.perf_counter()
        kernel = build(program, "llvm", split=24, cache=False)
        split = time.perf_counter() - start
        parts = len(getattr(kernel, "kernels", [kernel]))
        print(f"  {depth:>6}{blocks:>8}{whole:>10.2f}{split:>10.2f}{parts:>7}{whole / split:>13.2f}"
              f"{split * 1000 / blocks:>16.1f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="f32", choices=("f32", "f64", "f16"))
    parser.add_argument("--no-verify", action="store_true", help="translate only (no TVM build/run)")
    parser.add_argument("--match", default="", help="only workloads whose id contains TEXT")
    parser.add_argument("--build-scaling", action="store_true",
                        help="build time of one function vs split parts against the number of blocks")
    parser.add_argument("--depths", default="4,8,16,32", help="stack depths for --build-scaling")
    args = parser.parse_args()
    if args.build_scaling:
        return build_scaling([int(d) for d in args.depths.split(",")])
    if not args.no_verify:
        from frontend.reference import TorchReference
        from verifier.build import build
        from verifier.compare import compare_outputs

    per_level: dict[int, Counter] = defaultdict(Counter)
    ops: Counter = Counter()
    rows = []
    failures = []
    for info in list_workloads():
        if args.match not in info.id:
            continue
        per_level[info.level]["workloads"] += 1
        try:
            loaded = load_source(info.path, dtype=args.dtype)
            base = baseline_seconds(loaded.model, loaded.inputs)
            start = time.perf_counter()
            translation = translate_module(loaded.model, loaded.inputs, source_path=str(info.path))
            seconds = time.perf_counter() - start
        except Exception as exc:
            failures.append((info.id, "translate", f"{type(exc).__name__}: {exc}"))
            continue
        per_level[info.level]["translated"] += 1
        ops.update(set(translation.ops_seen))
        rows.append((info.id, seconds, base, len(translation.program.body.blocks)))
        if args.no_verify:
            continue
        try:
            reference = TorchReference(info.path, dtype=args.dtype)
            arrays = reference.inputs() | reference.params()
            got = build(reference.translation.program, "llvm").run(arrays)
            dtypes = {d.name: d.dtype for d in reference.translation.program.signature.by_role("output")}
            results = compare_outputs(got, reference.outputs(arrays), dtypes)
            if all(r.ok for r in results.values()):
                per_level[info.level]["verified"] += 1
            else:
                failures.append((info.id, "verify", str({k: r.max_rel_error for k, r in results.items()})))
        except Exception as exc:
            failures.append((info.id, "verify", f"{type(exc).__name__}: {exc}"))

    print(f"\nCoverage ({args.dtype}{', translation only' if args.no_verify else ', llvm verification'})")
    print(f"  {'level':<8}{'workloads':>10}{'translated':>12}{'verified':>10}")
    for level in sorted(per_level):
        c = per_level[level]
        verified = "-" if args.no_verify else str(c["verified"])
        print(f"  {level:<8}{c['workloads']:>10}{c['translated']:>12}{verified:>10}")
    print(f"\nOperators met ({len(ops)} distinct; workloads using each)")
    for name, count in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {name:<36}{count:>5}")
    print("\nTranslation time per workload (ratio = translate / (fx.symbolic_trace + one eager forward))")
    print(f"  {'workload':<52}{'blocks':>7}{'ms':>9}{'ratio':>8}")
    for wid, seconds, base, blocks in rows:
        print(f"  {wid:<52}{blocks:>7}{seconds * 1000:>9.1f}{seconds / max(base, 1e-9):>8.1f}")
    if rows:
        ratios = [s / max(b, 1e-9) for _, s, b, _ in rows]
        print(f"\n  median translate time {statistics.median(r[1] for r in rows) * 1000:.1f} ms, "
              f"median ratio {statistics.median(ratios):.1f}x the baseline")
    if failures:
        print(f"\nFailures ({len(failures)})")
        for wid, stage, message in failures:
            print(f"  {wid} [{stage}]: {message[:300]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
