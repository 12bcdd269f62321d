"""Bicubic and trilinear resizes at large sizes, translated and verified against PyTorch (issue 45).

Usage: ``python bench/resize.py [--large] [--timeout S]``.

The translation takes its resize weights from PyTorch's own kernel in the program's dtype (before, in
float64, a correct trilinear translation failed at 8M elements, bicubic at 8×8). The tests check small
sizes (tests/verifier/test_resize_against_torch.py); this prints, per case, the element count, the outcome,
the largest error and the worst error/bound ratio (≤ 1 passes) at sizes too slow for the test suite.
``--large`` adds the 8M-element trilinear case of the issue (minutes, and memory for the bound: give it
the default 4 GiB job).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frontend.translate import translate_file
from verifier.reference import TorchSourceReference
from verifier.verify import verify

SOURCE = Path(__file__).resolve().parents[1] / "tests" / "verifier" / "sources" / "resize.py"

CASES = [
    {"MODE": "bicubic", "SCALE": 1.7, "CHANNELS": 3, "DEPTH": 300, "SIDE": 300},
    {"MODE": "bicubic", "SCALE": 2.0, "ALIGN": 1, "CHANNELS": 3, "DEPTH": 256, "SIDE": 256},
    {"MODE": "trilinear", "SCALE": 1.5, "CHANNELS": 1, "DEPTH": 64, "SIDE": 64},
    {"MODE": "trilinear", "SCALE": 2.0, "ALIGN": 1, "CHANNELS": 1, "DEPTH": 48, "SIDE": 96},
]
#: 8M output elements: 128 × 256 × 256 from 64 × 128 × 128 (the size the issue saw fail).
LARGE = [{"MODE": "trilinear", "SCALE": 2.0, "CHANNELS": 1, "DEPTH": 64, "SIDE": 128},
         {"MODE": "trilinear", "SCALE": 1.7, "CHANNELS": 1, "DEPTH": 75, "SIDE": 150}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="add the 8M-element trilinear cases")
    parser.add_argument("--timeout", type=float, default=1200.0, help="per verification, seconds")
    args = parser.parse_args(argv)
    cases = CASES + (LARGE if args.large else [])
    failed = 0
    source = SOURCE
    for sets in cases:
        start = time.perf_counter()
        translation = translate_file(source, sets=sets, dtype="f32")
        (output,) = translation.program.signature.by_role("output")
        result = verify(translation.program, reference=TorchSourceReference(source, sets, "f32"),
                        params=translation.values, cache=False, timeout=args.timeout,
                        max_bound_iterations=10**9)
        failed += not result.ok
        ratio = f"{result.max_error_ratio:.3g}" if result.max_error_ratio is not None else "-"
        error = f"{result.max_abs_error:.2e}" if result.max_abs_error is not None else "-"
        print(f"{sets!s:90s} {math.prod(output.shape):>10,} elements  {result.outcome.value:10s} "
              f"max error {error}  error/bound {ratio} [{result.tolerance}]  "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    print(f"\n{len(cases)} cases, {len(cases) - failed} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
