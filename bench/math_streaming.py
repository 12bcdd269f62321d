"""Online softmax → flash attention on causal self-attention and grouped-query attention: time and passes.

Usage: ``python bench/math_streaming.py [--dtype f32|f64] [--repeats N]``.

For each workload (``level1/sdpa_causal``, ``level2/gqa_sdpa_causal``) the source program goes through
``online_softmax`` (#42) and then ``flashattention_wo_tiling`` (#43, unnormalised running output, one
division at the end), ``normal_matmul_to_prefix_matmul_based_on_online_softmax`` (#44, normalised running
output), or the full sequence #42 → #43 → #44 (#44's second form moves #43's final division into the
recurrence). Each final program is verified against the source and timed by the verifier on this
machine (``verify(..., time=True)``), which times the source kernel on the same fresh inputs in the same
run: the printed ratio is source time / final time (> 1 = the final program is faster). "passes" is the
number of top-level loop nests that read the score tensor (the streamed value of the softmax).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frontend import translate_file
from leir.ast import tensor_refs
from leir.printer import canonical
from strategies import apply_strategy
from strategies.math.streaming import score_passes, two_pass_stats
from verifier.verify import verify

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("level1/sdpa_causal", "level2/gqa_sdpa_causal")
FLASH, PREFIX = "flashattention_wo_tiling", "normal_matmul_to_prefix_matmul_based_on_online_softmax"
SEQUENCES = (("online_softmax", FLASH), ("online_softmax", PREFIX), ("online_softmax", FLASH, PREFIX))
SHORT = {"online_softmax": "#42", FLASH: "#43", PREFIX: "#44"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"{'workload':22} {'sequence':18} {'outcome':8} {'source ms':>10} {'final ms':>10} "
          f"{'ratio':>6} {'passes':>7}")
    failed = 0
    same: list[str] = []
    for workload_id in WORKLOADS:
        source = translate_file(ROOT / "workloads" / f"{workload_id}.py", dtype=args.dtype).program
        (stats,) = two_pass_stats(source)
        scores = sorted({r.name for r in tensor_refs(stats.x)})[0]
        finals: dict[str, str] = {}
        for sequence in SEQUENCES:
            final = source
            for name in sequence:
                final = apply_strategy(final, name, 0).after
            result = verify(final, parent=source, source=source, reference="parent", time=True, cache=False,
                            repeats=args.repeats)
            ok = result.outcome.value in {"pass", "equal_pass"}
            failed += not ok
            src, fin = result.source_timing, result.timing
            src_ms = f"{src.median * 1e3:10.3f}" if src else f"{'-':>10}"
            fin_ms = f"{fin.median * 1e3:10.3f}" if fin else f"{'-':>10}"
            ratio = f"{result.speedup_vs_source:6.2f}" if result.speedup_vs_source else f"{'-':>6}"
            passes = f"{score_passes(source, scores)} -> {score_passes(final, scores)}"
            label = " -> ".join(SHORT[name] for name in sequence)
            text = canonical(final.body)
            same += [f"{workload_id}: {label} gives the same program as {other}"
                     for other, seen in finals.items() if seen == text]
            finals[label] = text
            print(f"{workload_id:22} {label:18} {result.outcome.value:8} "
                  f"{src_ms} {fin_ms} {ratio} {passes:>7}", flush=True)
    for line in same:  # equal programs: any difference in their rows is measurement noise
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
