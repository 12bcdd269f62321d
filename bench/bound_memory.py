"""Peak memory of the error bound and the comparison, against the kernel's own buffers, at a real size.

Usage: ``python bench/bound_memory.py [--shape B,M,N] [--memory-mb MB] [--no-verify]``.

The program (issue 43): a broadcast logical-and over ``B×M×N`` (default 128×512×1024, 64M elements),
written as a KernelBench-style PyTorch file and translated by the frontend: two f32 inputs of shapes
``B×M×1`` and ``1×M×N`` are compared with 0.5, and-ed with broadcasting into a bool tensor, and that is
returned as f32 — so the error bound has a bool intermediate and a float output of the full size.

1. In this process: build the kernel, run it and PyTorch on the same seeded inputs, then measure with
   ``tracemalloc`` (NumPy reports its arrays to it) the peak of ``verify_job.bounded_compare`` — the
   error bound and the comparison, the step that ran out of memory — and print it beside the bytes of
   the program's tensors in their dtypes (``error_bound.kernel_bytes``) and their ratio, and
   ``error_bound.bound_bytes`` (what the bound's tensors take: 24 bytes per float element).
2. Unless ``--no-verify``: ``verifier.verify`` of the same program against the PyTorch file in the
   sandbox under ``--memory-mb`` (default: the sandbox's 4096 MiB), and its outcome.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SOURCE = """import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return torch.logical_and(x > 0.5, y > 0.5).float()


B, M, N = {b}, {m}, {n}


def get_inputs():
    return [torch.rand(B, M, 1), torch.rand(1, M, N)]


def get_init_inputs():
    return []
"""


def measure(path: Path) -> dict[str, float]:
    """Translate ``path``, run kernel and PyTorch, and measure ``bounded_compare``'s peak (bytes)."""
    from frontend import translate_file
    from verifier.build import build
    from verifier.error_bound import bound_bytes, kernel_bytes
    from verifier.inputs import make_inputs
    from verifier.reference import TorchSourceReference
    from verifier.verify_job import bounded_compare

    translation = translate_file(path)
    program = translation.program
    kernel = build(program, target="llvm", cache=False)
    arrays = make_inputs(program, seed=0, params=translation.values)
    outputs = kernel.run(arrays)
    expected = TorchSourceReference(path).outputs(arrays)
    notes: list[str] = []
    tracemalloc.start()
    start = time.perf_counter()
    comparisons = bounded_compare(program, program, outputs, expected, arrays, notes=notes,
                                  max_iterations=10**12)
    seconds = time.perf_counter() - start
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"peak": peak, "kernel": kernel_bytes(program), "bound": bound_bytes(program), "seconds": seconds,
            "ok": all(c.ok for c in comparisons.values()),
            "methods": ",".join(sorted({c.method for c in comparisons.values()}))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="128,512,1024", help="B,M,N of the logical-and (128,512,1024)")
    parser.add_argument("--memory-mb", type=int, default=None, help="sandbox memory limit (its default)")
    parser.add_argument("--no-verify", action="store_true", help="skip the sandboxed verify")
    args = parser.parse_args(argv)
    b, m, n = (int(v) for v in args.shape.split(","))
    mib = 2.0**20
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "broadcast_logical_and.py"
        path.write_text(SOURCE.format(b=b, m=m, n=n), encoding="utf-8")
        got = measure(path)
        print(f"broadcast logical-and {b}x{m}x{n} ({math.prod((b, m, n)):,} elements)")
        print(f"  kernel buffers (program tensors in their dtypes): {got['kernel'] / mib:9.1f} MiB")
        print(f"  bound tensors (bound_bytes):                      {got['bound'] / mib:9.1f} MiB")
        print(f"  peak of bound + comparison (tracemalloc):         {got['peak'] / mib:9.1f} MiB "
              f"in {got['seconds']:.1f} s")
        print(f"  ratio peak / kernel buffers: {got['peak'] / got['kernel']:.2f}  "
              f"(comparison: {got['methods']}, {'pass' if got['ok'] else 'FAIL'})")
        if args.no_verify:
            return 0
        from frontend import translate_file
        from verifier.reference import TorchSourceReference
        from verifier.verify import DEFAULT_MEMORY_LIMIT_MB, verify

        translation = translate_file(path)
        limit = args.memory_mb or DEFAULT_MEMORY_LIMIT_MB
        start = time.perf_counter()
        result = verify(translation.program, reference=TorchSourceReference(path), params=translation.values,
                        cache=False, memory_limit_mb=limit, max_bound_iterations=10**12)
        print(f"  verify in the sandbox (--memory-mb {limit}): outcome={result.outcome.value} "
              f"tolerance={result.tolerance} in {time.perf_counter() - start:.1f} s"
              + (f"\n    {result.error}" if result.error else ""))
        return 0 if result.outcome.value in ("pass", "equal_pass") else 1


if __name__ == "__main__":
    sys.exit(main())
