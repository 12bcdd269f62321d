"""Pass counts of translate + verify against PyTorch under the fixed and the scaled tolerance.

Usage: ``python bench/tolerance.py [--sample K] [--dtype f32|f64] [--special-values] [--no-long]``.

Every ``len/K``-th built-in workload (sorted by level and name; all of them with ``--sample 0``) is
translated at its default shapes and verified against its PyTorch source twice in the same run:

* **fixed** — the per-dtype rtol/atol rule (what verification used before the scaled tolerance; forced
  here by ``max_bound_iterations=0``, which leaves the error bound unevaluated);
* **scaled** — the per-element rounding-error bound (docs/verification.md).

Then the long-reduction cases that the fixed rule rejects (``LONG``), at the sizes given there. Prints one
line per case and the pass counts; a case that passes under fixed but fails under scaled is flagged.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frontend.translate import translate_file
from verifier.reference import TorchSourceReference
from verifier.verify import verify
from workloads.registry import list_workloads

#: Long reductions at the sizes that made the fixed tolerance reject correct programs.
LONG = [
    ("cumsum", {"BATCH": 2, "LENGTH": 32768}),
    ("mse_loss", {"BATCH": 128, "DIM": 4096}),
    ("matmul", {"M": 4, "K": 65536, "N": 4}),
    ("softmax", {"BATCH": 2, "DIM": 65536}),
    ("sum_dim", {"BATCH": 2, "DIM1": 65536, "DIM2": 4}),
    ("cumsum_reverse", {"BATCH": 2, "LENGTH": 32768}),
    ("logsumexp", {"BATCH": 2, "DIM1": 65536, "DIM2": 4}),
    ("rms_norm", {"BATCH": 2, "SEQ": 4, "HIDDEN": 32768}),
]


def _one(path: Path, sets: dict, dtype: str, special: bool) -> tuple[str, str, str]:
    try:
        translation = translate_file(path, sets=sets, dtype=dtype)
    except Exception as exc:
        return "untranslated", "untranslated", f"{type(exc).__name__}: {exc}"[:80]
    reference = TorchSourceReference(path, sets, dtype)
    common = dict(reference=reference, params=translation.values, cache=False, special_values=special)
    fixed = verify(translation.program, max_bound_iterations=0, **common)
    scaled = verify(translation.program, **common)
    detail = f"rel {scaled.max_rel_error:.2e}" if scaled.max_rel_error is not None else ""
    if scaled.max_error_ratio is not None:
        detail += f"  error/bound {scaled.max_error_ratio:.3g} [{scaled.tolerance}]"
    if scaled.error and not scaled.ok:
        detail += f"  {scaled.error[:60]}"
    return fixed.outcome.value, scaled.outcome.value, detail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=5, help="take every K-th workload (0: all)")
    parser.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    parser.add_argument("--special-values", action="store_true")
    parser.add_argument("--no-long", action="store_true", help="skip the long-reduction cases")
    args = parser.parse_args(argv)
    workloads = sorted(list_workloads(), key=lambda w: (w.level, w.name))
    chosen = workloads if args.sample <= 0 else workloads[:: args.sample]
    cases = [(w.name, w.path, {}) for w in chosen]
    if not args.no_long:
        by_name = {w.name: w for w in workloads}
        cases += [(f"{name} {sets}", by_name[name].path, sets) for name, sets in LONG if name in by_name]
    counts = {"fixed": 0, "scaled": 0}
    regressions = []
    start = time.perf_counter()
    for label, path, sets in cases:
        fixed, scaled, detail = _one(path, sets, args.dtype, args.special_values)
        counts["fixed"] += fixed in ("pass", "equal_pass")
        counts["scaled"] += scaled in ("pass", "equal_pass")
        flag = ""
        if fixed == "pass" and scaled != "pass":
            flag = "  <-- REGRESSION"
            regressions.append(label)
        print(f"{label:60s} fixed={fixed:12s} scaled={scaled:12s} {detail}{flag}", flush=True)
    print(f"\n{len(cases)} cases ({len(chosen)} sampled workloads + {len(cases) - len(chosen)} long), "
          f"dtype {args.dtype}{', special values' if args.special_values else ''}: "
          f"pass fixed {counts['fixed']}, pass scaled {counts['scaled']}; "
          f"{len(regressions)} regressions; {time.perf_counter() - start:.0f} s")
    return 1 if regressions else 0


if __name__ == "__main__":
    raise SystemExit(main())
