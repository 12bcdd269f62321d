"""Tuning with RulePolicy: speedup over the source program, fast_1 against PyTorch eager, GEMM GFLOP/s.

Usage: ``python bench/tune.py [--split heldout|fitting|all] [--only ID] [--per-level K] [--policy
rule|learned --policy-model M.json] [--json OUT.json [--resume]] [--budget verifications=N,seconds=S]
[--width W] [--eager-ms M]`` (the budget is per workload; the default, 128 verifications or 480 s, ends a
search whose candidates are cheap by its count and one whose candidates take most of a minute by its clock, so
an eight-workload run takes about an hour; at 64 a cheap search ran out of candidates half-way through
its time: level1/cosine_similarity_loss stopped at depth 7 after 114 s, 18.6x, and reached depth 12,
21.0x, in 212 s with 128; level2/gemm_scale used its 64 in 280 s).

For the workloads of one side of the seeded split (``tuner.splits``; ``--per-level K``: every n-th id of
it, K per level), each level's figures printed per side:

1. **Shapes.** At the suite's tiny default shapes PyTorch's per-call overhead dominates and any kernel
   "beats" eager, so each workload runs at the smallest shapes on the geometric path from its default to
   its declared ``paper_shapes`` (``t`` = 0, 0.25, 0.5, 0.75, 1 of the way, integer sizes only) at which
   eager takes at least ``--eager-ms`` per call; the table prints the shapes and the ``t`` used, and marks
   workloads that stay under the floor even at paper size. On a loaded machine eager's per-call overhead
   alone can exceed the floor at the default sizes; ``--shape-t T`` then fixes the point for every
   workload instead.
2. **Tune.** Beam search (``--width``) with ``RulePolicy`` at those shapes and the ``--budget``; every
   candidate verified against its parent and timed against the source in the same sandbox job.
3. **Final measurement.** The best state is verified once more against the PyTorch module itself
   (``TorchSourceReference``) with timing, so the kernel, the source program and PyTorch eager are timed
   in ONE job on the same fresh inputs: ``speedup_vs_source`` and ``speedup_vs_torch`` come from there.
   The check runs ``--final-jobs`` times (3) and the table shows the job with the median speedup over
   the source: on a shared VM one job can fall into a stretch of low memory bandwidth and read a
   memory-bound kernel at a third of its speed. Every job's reading is in the JSON row
   (``final_speedups``), and any job that fails is the row's outcome. The row also keeps the tuned
   program itself (``program``, canonical LEIR), so a figure can be re-timed or read without the search.
   That check evaluates the rounding-error bound of programs up to ``--final-bound-iterations`` (250M)
   statement executions, where the verifier's default stops at 32M and falls back to the fixed tolerance.

4. **Kernel, eager, torch.compile.** ``tuner.compare`` times the tuned kernel, eager and
   ``torch.compile`` in ONE job, interleaved, until each spread is within ``--compare-bound``: fast_1 and
   fast_compile per level come from it, and a row that never got within the bound says so.

The source and each parent are timed once per search (``Measurer(reuse_timings=True)``; the final check
and the compare job re-time everything); each row's ``time`` splits the search's seconds into policy,
build, verification and timing.

Printed per level: the geometric-mean speedup over the source, fast_1 (the fraction of workloads whose
tuned kernel is faster than eager) and, for GEMM-like workloads, GFLOP/s of the tuned kernel next to eager's
(FLOPs counted from the LEIR: one per arithmetic operation, ``2*M*N*K`` for a matrix product), and
per row the roofline ceiling from the best of the machine's peak readings before and after the run (the
read bandwidth at the row's own working-set size, so a cache-sized workload is judged at the cache's rate;
a row whose kernel still beats its ceiling is marked ``!``).
The figures depend on which strategies are registered: report them with the strategy list printed first.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataset.generation import Source
from dataset.records import SourceInfo
from frontend import translate_file
from leir.printer import canonical
from leir.program import program_hash
from strategies.registry import all_strategies
from tuner.cost import program_flops
from tuner.measure import Measurer
from tuner.policies import RulePolicy
from tuner.run import tune
from tuner.search import Budget
from tuner.splits import SPLITS, describe, workload_split
from verifier.targets import CONTRACTION_FREE_TWIN, TUNING_TARGET
from workloads.registry import list_workloads

GEMM_WORDS = ("matmul", "bmm", "gemm", "linear")
#: The final check evaluates the rounding-error bound (``verifier.error_bound``) of programs up to this
#: size, not only the verifier's default 32M: at the larger declared sizes a long reduction (a matvec over
#: K=131,072) is correct to what its length allows, which the fixed per-dtype tolerance rejects. Measured
#: 0.1-0.12 us per statement execution and 5 GB for that 168M-execution matvec, so the final job gets
#: more time and memory than a search job.
FINAL_BOUND_ITERATIONS = 250_000_000
FINAL_MEMORY_MB = 12_288
FINAL_TIMEOUT_S = 900.0
STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Compared with eager, kernels are built with every instruction eager's MKL/oneDNN use, FMA included
#: (``verifier.targets.native_llvm``); the tuner's default ``llvm-host`` leaves FMA off so its verdicts are
#: the baseline build's bits, and costs a GEMM tile a quarter of its rate (``bench/fma.py``: 251 vs 337).
BENCH_TARGET = "llvm-native"
#: A fused target's twin without fusion, whose source build can be the faster (``source_seconds_on``); the
#: search also judges an exact step's equal pass there (``tuner.measure``).
UNFUSED_TWIN = CONTRACTION_FREE_TWIN


#: The workload split every run reports against (``tuner.splits``, seed 0).
SPLIT = workload_split()


def make_policy(args):
    """``--policy rule`` or ``learned`` (with ``--policy-model``), both on the bench's target."""
    if args.policy == "learned":
        from tuner.policies.learned import LearnedPolicy

        if not args.policy_model:
            raise SystemExit("--policy learned needs --policy-model MODEL.json (steptp fit-policy)")
        return LearnedPolicy(args.policy_model, seed=0, measured={}, target=args.target,
                             lookahead_seconds=args.lookahead_seconds)
    return RulePolicy(seed=0, measured={}, target=args.target, lookahead_seconds=args.lookahead_seconds)


def chosen_workloads(args) -> list:
    """``--only`` ids, else every workload of ``--split`` in ``--levels`` (``--per-level K``: a
    deterministic sample of K per level from that split instead)."""
    from workloads.registry import get_workload

    if args.only:
        return [get_workload(w) for w in args.only]
    wanted = set(SPLIT.ids(args.split))
    levels = set(map(int, args.levels.split(",")))
    chosen = []
    for level in sorted(levels):
        suite = [w for w in sorted(list_workloads(level), key=lambda w: w.id) if w.id in wanted]
        if args.per_level:
            stride = max(1, len(suite) // args.per_level)
            suite = suite[::stride][:args.per_level]
        chosen.extend(suite)
    return chosen


def sample(level: int, per_level: int) -> list:
    suite = sorted(list_workloads(level), key=lambda w: w.id)
    stride = max(1, len(suite) // per_level)
    return suite[::stride][:per_level]


def shapes_at(info, t: float) -> dict[str, int]:
    from workloads.variants import scaled_shapes

    return scaled_shapes(info, t)


def eager_ms(info, sets: dict[str, int]) -> float:
    """Eager forward time (ms per call) at ``sets``, timed in a sandbox worker as the final check times it."""
    from tuner.eager import eager_ms as probe

    return probe(info.path, sets)


def choose_shapes(info, floor_ms: float) -> tuple[dict[str, int], float, float]:
    """(sets, t, eager ms) — the first step of the path where eager reaches ``floor_ms``."""
    last = ({}, 0.0, 0.0)
    for t in STEPS:
        sets = shapes_at(info, t)
        try:
            ms = eager_ms(info, sets)
        except Exception as exc:
            print(f"  {info.id}: eager failed at t={t}: {type(exc).__name__}: {exc}", file=sys.stderr)
            break
        last = (sets, t, ms)
        if ms >= floor_ms:
            break
    return last


def _progress(search) -> None:
    print("  " + search.progress_line(), file=sys.stderr, flush=True)


def run_one(info, args) -> dict:
    from verifier.reference import TorchSourceReference
    from verifier.verify import verify

    if args.shape_t is not None:
        sets, t = shapes_at(info, args.shape_t), args.shape_t
        ms = eager_ms(info, sets)
    else:
        sets, t, ms = choose_shapes(info, args.eager_ms)
    print(f"  shapes {sets} (t={t}), eager {ms:.3g} ms per call", file=sys.stderr, flush=True)
    program = translate_file(info.path, sets=sets).program
    source = Source(SourceInfo(f"{info.id}@f32#bench", info.id, info.level, "f32", 0, sets,
                               program_hash(program)), program)
    # The source's and each parent's timings are taken once per run and reused beside every candidate
    # (``--retime-source`` times them in every job again); the final check re-times all of them.
    measurer = Measurer(program, target=args.target, cache=False, repeats=args.repeats,
                        min_repeat_ms=args.min_repeat_ms, reuse_timings=not args.retime_source)
    start = time.perf_counter()
    try:
        policy = make_policy(args)
        search = tune(source, policy, measurer, Budget.parse(args.budget), algo="beam", branch=args.branch,
                      max_depth=args.max_depth,
                      options={"width": args.width}, progress=_progress)
        searched = time.perf_counter() - start
        finals = [verify(search.best.program, source=program, target=args.target, time=True,
                         pool=measurer.pool, cache=False,
                         reference=TorchSourceReference(info.path, sets), repeats=args.repeats,
                         min_repeat_ms=args.min_repeat_ms, max_bound_iterations=args.final_bound_iterations,
                         memory_limit_mb=args.final_memory_mb, timeout=FINAL_TIMEOUT_S)
                  for _job in range(max(1, args.final_jobs))]
        twin = UNFUSED_TWIN.get(args.target)
        host_source = source_seconds_on(program, twin, args, measurer.pool) if twin else None
        compared = None
        if args.compare:
            from leir.program import dump_program
            from tuner.compare import run_compare

            try:
                compared = run_compare(info.path, sets, dump_program(search.best.program), args.target,
                                       pool=measurer.pool, bound=args.compare_bound,
                                       max_rounds=args.compare_max_rounds, min_repeat_ms=args.min_repeat_ms)
            except RuntimeError as exc:
                compared = {"error": str(exc)[:500]}
            print(f"  compare: {json.dumps(compared, default=str)}", file=sys.stderr, flush=True)
    finally:
        measurer.close()
    final = median_job(finals, host_source)
    # Any final job that did not pass is the row's outcome: the median picks a timing, never a verdict.
    checked = next((f for f in finals if f.outcome.value not in ("pass", "equal_pass")), final)
    row = {"id": info.id, "level": info.level, "split": SPLIT.side(info.id), "policy": args.policy,
           "time": search.usage.time_json(), "sets": sets, "t": t, "eager_ms_probe": ms,
           "under_floor": ms < args.eager_ms, "outcome": checked.outcome.value,
           "steps": search.best.depth, "verifications": search.usage.verifications,
           "accepted": search.usage.accepted, "search_seconds": round(searched, 1),
           "search_speedup": search.best.speedup, "confirmations": search.usage.confirmations,
           "path": [n.label() for n in search.best_path()[1:]],
           "program": canonical(search.best.program),
           "final_speedups": [over_source(f, host_source) for f in finals],
           "max_abs_error": checked.max_abs_error, "error": checked.error, "tolerance": checked.tolerance,
           "notes": list(checked.notes), "compare": compared}
    timing = final.timing.median if final.timing else None
    torch_t = final.torch_timing.median if final.torch_timing else None
    target_source = final.source_timing.median if final.source_timing else None
    source_t = min((t for t in (target_source, host_source) if t), default=None)
    row.update(kernel_ms=timing and timing * 1e3, eager_ms=torch_t and torch_t * 1e3,
               source_ms=source_t and source_t * 1e3, source_ms_target=target_source and target_source * 1e3,
               source_ms_host=host_source and host_source * 1e3,
               speedup_vs_source=over_source(final, host_source), speedup_vs_torch=final.speedup_vs_torch)
    row["compulsory_bytes"], row["flops"] = compulsory_bytes(program), program_flops(program)
    if any(word in info.id for word in GEMM_WORDS):
        flops = row["flops"]
        row["gflops"] = timing and flops / timing / 1e9
        row["eager_gflops"] = torch_t and flops / torch_t / 1e9
    return row


def source_seconds_on(program, target: str, args, pool) -> float | None:
    """The source program's time built for ``target``: the median of ``--final-jobs`` jobs, each timing
    it as the final check does, so that one stray reading does not set the row's denominator.

    On a CPU whose fused multiply-add has a longer latency than its add (Zen 5: 4 cycles against 2), a
    source reduction that is one long dependency chain runs twice as slowly with fusion on (gemm_scale
    at 96x1664x1600: 237 ms on llvm-native, 119 ms on llvm-host): a speedup over that source would
    credit the tuning with what the target did to the baseline. The row's source time is the faster of
    the two builds."""
    from verifier.verify import verify

    readings = []
    for _job in range(max(1, args.final_jobs)):
        result = verify(program, target=target, time=True, reference="none", pool=pool, cache=False,
                        repeats=args.repeats, min_repeat_ms=args.min_repeat_ms)
        if result.timing:
            readings.append(result.timing.median)
    return statistics.median(readings) if readings else None


def over_source(final, host_source: float | None) -> float | None:
    """A final check's speedup over the faster build of the source (``source_seconds_on``)."""
    if not (final.timing and final.source_timing):
        return final.speedup_vs_source
    source = min(final.source_timing.median, host_source or math.inf)
    return source / final.timing.median


def median_job(finals: list, host_source: float | None = None):
    """The final check whose speedup over the source is the median of ``finals`` (the lower middle for
    an even count; a failed job counts as the slowest). One job on a shared machine can fall into a
    stretch of low memory bandwidth and read a third of the kernel's speed; the median of a few whole
    jobs does not, and re-running every workload the same number of times keeps it unbiased."""
    ordered = sorted(finals, key=lambda f: speedup if (speedup := over_source(f, host_source)) is not None
                     else -1.0)
    return ordered[(len(ordered) - 1) // 2]


def compulsory_bytes(program) -> int:
    """Bytes any kernel must move once: every input, parameter and output tensor (intermediates may stay
    in cache in the best kernel, so they are left out)."""
    from leir.dtypes import tensor_nbytes

    return sum(tensor_nbytes(t.dtype, t.shape) for t in program.signature.tensors
               if t.role in ("input", "param", "output"))


#: Buffer sizes (MiB) the read bandwidth is probed at. A kernel whose inputs and outputs fit a cache level is
#: read at that level's rate, not DRAM's: against the 256 MiB reading alone, four of eight tuned rows of one
#: run (an 8 MB pooling, a 4 MB cosine loss, a 2 MB elementwise, a 41 MB batch norm) beat their "ceiling"
#: by up to 2.6x. The largest size is the DRAM reading the table prints.
READ_PROBE_MIB = (1, 4, 16, 64, 256)


def machine_peaks(repeats: int = 5) -> dict:
    """This machine's read bandwidth (a ``torch.sum`` over a working set of each ``READ_PROBE_MIB`` size)
    and GEMM rate (a 2048³ ``torch.matmul``, MKL/oneDNN on every core), timed as eager is
    (``verifier.timing.time_callable``): the roofline a ceiling is computed from. ``read_gb_s`` is the
    largest working set's reading, ``read_gb_s_at`` every size's (keyed by bytes)."""
    import torch

    from verifier.cpu_share import alone
    from verifier.timing import time_callable

    largest = max(READ_PROBE_MIB) * 2**20
    # A small buffer is summed as ``largest // size`` rows of one broadcast view (stride 0, no copy): each
    # call reads as many bytes as the largest probe's from a working set of ``size``, so the call overhead
    # does not hide a cache's rate (1 MiB read 110 GB/s summed once per call, 193 GB/s this way).
    views = {size: torch.ones(size // 4).expand(largest // size, size // 4)
             for size in (mib * 2**20 for mib in READ_PROBE_MIB)}
    a = torch.randn(2048, 2048)
    with alone():
        reads = {size: largest / time_callable(view.sum, repeats=repeats).median / 1e9
                 for size, view in views.items()}
        gemm = time_callable(lambda: a @ a, repeats=repeats).median
    return {"read_gb_s": reads[largest], "read_gb_s_at": reads,
            "gflop_s": 2 * 2048 ** 3 / gemm / 1e9, "threads": float(torch.get_num_threads())}


def best_peaks(readings: list[dict]) -> dict:
    """The highest bandwidth (at each probed size) and GEMM rate of several ``machine_peaks`` readings. A
    shared VM's memory bandwidth swings by 1.6x within an hour, and a ceiling is the most a kernel could
    gain: divided by a low reading it is exceeded by tuned rows, so the run takes readings before and after
    and keeps the best of each."""
    best: dict = {key: max(r[key] for r in readings) for key in readings[0] if key != "read_gb_s_at"}
    best["read_gb_s_at"] = {size: max(r["read_gb_s_at"][size] for r in readings)
                            for size in readings[0]["read_gb_s_at"]}
    return best


def bandwidth_for(nbytes: int, peaks: dict) -> float:
    """The most bandwidth a working set of ``nbytes`` can be read at here: the best reading at any probed
    size up to ``nbytes`` (a smaller set sits in a faster cache, so this bounds the rate from above), or
    the smallest probe's when ``nbytes`` is below every probe."""
    ladder = peaks["read_gb_s_at"]
    fitting = [rate for size, rate in ladder.items() if size <= nbytes]
    return max(fitting) if fitting else ladder[min(ladder)]


def add_roofline(row: dict, peaks: dict) -> None:
    """``floor_ms``: the least time any kernel needs on this machine (compulsory bytes at the bandwidth a
    working set of that size is read at, ``bandwidth_for``, or the FLOPs at the GEMM rate, whichever is
    more); ``ceiling``: source time / floor, the most any tuned kernel could gain over the source here."""
    if "compulsory_bytes" not in row:
        from workloads.registry import get_workload

        program = translate_file(get_workload(row["id"]).path, sets=row["sets"]).program
        row["compulsory_bytes"], row["flops"] = compulsory_bytes(program), program_flops(program)
    row["floor_gb_s"] = bandwidth_for(row["compulsory_bytes"], peaks)
    floor_s = max(row["compulsory_bytes"] / (row["floor_gb_s"] * 1e9),
                  row["flops"] / (peaks["gflop_s"] * 1e9))
    row["floor_ms"] = floor_s * 1e3
    row["ceiling"] = row["source_ms"] / row["floor_ms"] if row.get("source_ms") else None


def beyond(row: dict) -> bool:
    """Whether the tuned kernel beat its roofline ceiling, which the table marks rather than hides."""
    return bool(row.get("ceiling") and (row.get("speedup_vs_source") or 0) > row["ceiling"])


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def report(rows: list[dict], args, earlier_peaks: list[dict] = ()) -> None:
    def fmt(v, spec=".3g"):
        return "-" if v is None else format(v, spec)

    print(f"strategies registered: {', '.join(s.name for s in all_strategies())}")
    sides = sorted({str(r.get("split")) for r in rows})
    print(f"policy {args.policy}; split {args.split} (seed {SPLIT.seed}: {len(SPLIT.fitting)} fitting, "
          f"{len(SPLIT.heldout)} held-out workloads; rows from {', '.join(sides) or 'none'}); "
          f"{len(rows)} workloads: {', '.join(r['id'] for r in rows)}")
    print(f"budget {args.budget}, beam width {args.width}, branch {args.branch}, max depth {args.max_depth}, "
          f"eager floor {args.eager_ms} ms, "
          f"timing repeats {args.repeats} x >= {args.min_repeat_ms} ms (interleaved), "
          f"target {args.target}")
    readings = [*earlier_peaks, machine_peaks()]
    peaks = best_peaks(readings)
    for r in rows:
        add_roofline(r, peaks)
    seen = ", ".join(f"{r['read_gb_s']:.3g} GB/s and {r['gflop_s']:.3g} GFLOP/s" for r in readings)
    print(f"this machine: read {peaks['read_gb_s']:.3g} GB/s, GEMM {peaks['gflop_s']:.3g} GFLOP/s "
          f"({peaks['threads']:.0f} threads; the best of the readings {seen}, taken before and after the "
          "run); 'ceiling' = source time / the least time any kernel needs here")
    ladder = ", ".join(f"{size // 2**20} MiB {rate:.3g}"
                       for size, rate in sorted(peaks["read_gb_s_at"].items()))
    print(f"read GB/s by working-set size ({ladder}): a row's memory floor reads its input, parameter "
          "and output bytes at the best rate of a size up to theirs")
    print("'search': the best state's speedup as the search measured it (no PyTorch in those jobs); "
          "'vs src' and 'vs eager': the final check, kernel and source interleaved, then eager, in one job "
          "(of the final jobs, the one with the median 'vs src')")
    if any(r.get("source_ms_host") for r in rows):
        print(f"'src ms': the faster of the source built for {args.target} (in the final job) and for "
              f"{UNFUSED_TWIN.get(args.target)} (one more job; a reduction chain of fused multiply-adds can "
              "be slower than one of adds), so the target's effect on the source is not counted as tuning")
    print(f"{'workload':38} {'t':>4} {'eager ms':>9} {'src ms':>9} {'best ms':>9} {'search':>7} "
          f"{'vs src':>7} {'ceiling':>7} {'vs eager':>8} {'steps':>5}  GFLOP/s (tuned / eager)  shapes")
    for r in rows:
        gf = f"{fmt(r.get('gflops'))} / {fmt(r.get('eager_gflops'))}" if "gflops" in r else ""
        mark = "*" if r["under_floor"] else " "
        print(f"{r['id']:38} {r['t']:4.2f} {fmt(r['eager_ms'])}{mark:>1} {fmt(r['source_ms']):>9} "
              f"{fmt(r['kernel_ms']):>9} {fmt(r.get('search_speedup')):>7} {fmt(r['speedup_vs_source']):>7} "
              f"{fmt(r['ceiling']):>6}{'!' if beyond(r) else ' '} "
              f"{fmt(r['speedup_vs_torch']):>8} {r['steps']:5d}  {gf:23}  {r['sets']}")
    compared = [r for r in rows if (r.get("compare") or {}).get("kernel_ms")]
    if compared:
        print(f"one job, interleaved (tuner.compare; spread bound {compared[0]['compare']['bound']}): "
              "kernel, eager and torch.compile (inductor)")
        print(f"{'workload':38} {'kernel ms':>9} {'eager ms':>9} {'compile ms':>10} {'vs eager':>8} "
              f"{'vs compile':>10} {'rounds':>6}  spread")
        for r in compared:
            c = r["compare"]
            mark = "*" if (c.get("eager_ms") or 0) < args.eager_ms else " "
            bound = "within" if c["within_bound"] else "NOT within bound"
            print(f"{r['id']:38} {fmt(c['kernel_ms']):>9} {fmt(c['eager_ms']):>8}{mark} "
                  f"{fmt(c.get('compiled_ms')):>10} {fmt(c['vs_eager']):>8} {fmt(c.get('vs_compiled')):>10} "
                  f"{c['rounds']:>6}  {bound}: {c['spread']}" + ("" if c.get("compiled_ms") else
                                                                  f"  ({c.get('note')})"))
    for level, side in sorted({(r["level"], str(r.get("split"))) for r in rows}):
        chosen = [r for r in rows if r["level"] == level and str(r.get("split")) == side]
        fast = [r for r in chosen if (r["speedup_vs_torch"] or 0) > 1.0]
        mean = geomean([r["speedup_vs_source"] for r in chosen])
        ceiling = geomean([r["ceiling"] for r in chosen])
        searched = geomean([r.get("search_speedup") for r in chosen])
        spent = {key: sum((r.get("time") or {}).get(key, 0.0) for r in chosen)
                 for key in ("total", "policy", "build", "verification", "timing")}
        print(f"level {level} [{side}]: search seconds {spent['total']:.0f} (policy {spent['policy']:.0f}, "
              f"build {spent['build']:.0f}, verification {spent['verification']:.0f}, "
              f"timing {spent['timing']:.0f})")
        print(f"level {level} [{side}]: geomean speedup over source {fmt(mean)}x "
              f"(in the search {fmt(searched)}x, "
              f"roofline ceiling {fmt(ceiling)}x)"
              f" over {len(chosen)} workloads; fast_1 vs eager {len(fast)}/{len(chosen)}")
        timed = [r["compare"] for r in chosen if (r.get("compare") or {}).get("kernel_ms")]
        if timed:
            fast_1 = sum(1 for c in timed if (c["vs_eager"] or 0) > 1.0)
            with_compile = [c for c in timed if c.get("vs_compiled")]
            fast_compile = sum(1 for c in with_compile if c["vs_compiled"] > 1.0)
            within = sum(1 for c in timed if c["within_bound"])
            print(f"level {level} [{side}]: in one interleaved job: fast_1 {fast_1}/{len(timed)}, "
                  f"fast_compile {fast_compile}/{len(with_compile)} "
                  f"(torch.compile ran on {len(with_compile)}); "
                  f"{within}/{len(timed)} rows within the spread bound")
    if any(beyond(r) for r in rows):
        print("! the tuned kernel beat the ceiling: a peak reading understated this machine (its GEMM rate "
              "is MKL's on a 2048^3 product, not the FMA units' limit; a bandwidth reading is a torch.sum's)")
    if any(r["under_floor"] for r in rows):
        where = f"at t={args.shape_t}" if args.shape_t is not None else "even at paper_shapes"
        print(f"* eager's probe stayed under {args.eager_ms} ms {where} for this workload")
    if any(r["steps"] == 0 for r in rows):
        print("steps 0: no step beat the source, so the best state IS the source and its 'vs src' is "
              "the timing noise of one program timed twice in one job")
    for r in rows:
        if r["outcome"] not in ("pass", "equal_pass"):
            rule = f", {r['tolerance']} tolerance" if r.get("tolerance") else ""
            print(f"{r['id']}: the final check against PyTorch gave {r['outcome']} (max abs error "
                  f"{r['max_abs_error']}{rule}) {r['error'] or ''}")
            for note in r.get("notes", ()):
                print(f"  note: {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,2")
    parser.add_argument("--per-level", type=int, default=0,
                        help="a deterministic sample of K workloads per level of the split (default 0: all)")
    parser.add_argument("--split", choices=SPLITS, default="heldout",
                        help="which side of the seeded workload split (tuner.splits) to run "
                             "(default heldout)")
    parser.add_argument("--only", action="append", help="workload id(s) instead of the split")
    parser.add_argument("--resume", action="store_true",
                        help="with --json: keep the rows already in OUT.json and run only the others; the "
                             "file is rewritten after every row")
    parser.add_argument("--policy", choices=("rule", "learned"), default="rule")
    parser.add_argument("--policy-model", metavar="MODEL.json",
                        help="--policy learned: steptp fit-policy's model")
    parser.add_argument("--lookahead-seconds", type=float, default=None, metavar="S",
                        help="bound each policy call: after S seconds the remaining steps get no lookahead "
                             "(default: unbounded; a bounded call's ranking depends on the machine's speed)")
    parser.add_argument("--retime-source", action="store_true",
                        help="time the source and the parent beside every candidate (default: once per run)")
    parser.add_argument("--no-compare", dest="compare", action="store_false",
                        help="skip the interleaved kernel / eager / torch.compile job (tuner.compare)")
    parser.add_argument("--compare-bound", type=float, default=0.05,
                        help="relative spread every contestant of the compare job must reach (default 0.05)")
    parser.add_argument("--compare-max-rounds", type=int, default=30,
                        help="rounds after which the compare job stops, bound met or not (default 30)")
    parser.add_argument("--list-split", action="store_true", help="print the split's two lists and exit")
    parser.add_argument("--budget", default="verifications=128,seconds=480",
                        help="per workload (verifications=N, policy_calls=N, seconds=S)")
    parser.add_argument("--width", type=int, default=2)
    parser.add_argument("--branch", type=int, default=4)
    parser.add_argument("--max-depth", type=int, default=16,
                        help="deepest state searched (default 16: a GEMM's register tile is nine steps from "
                             "the source, and after it the weight transpose and the epilogue still want "
                             "their parallel loops)")
    parser.add_argument("--eager-ms", type=float, default=1.0)
    parser.add_argument("--shape-t", type=float, default=None, metavar="T",
                        help="run every workload at point T (0..1) of the default->paper path instead of "
                             "probing for the eager floor (eager's overhead on a loaded machine can meet "
                             "the floor at tiny sizes)")
    parser.add_argument("--target", default=BENCH_TARGET,
                        help=f"{BENCH_TARGET} (default: this CPU's vector ISA and fused multiply-add, as "
                             f"eager's MKL/oneDNN use them), {TUNING_TARGET} (the tuner's default: the same "
                             "without fused multiply-add, results the same bits as llvm's) or llvm "
                             "(baseline x86-64, the dataset's target)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-repeat-ms", type=float, default=20.0)
    parser.add_argument("--final-bound-iterations", type=int, default=FINAL_BOUND_ITERATIONS,
                        help="largest program (statement executions) whose rounding-error bound the final "
                             f"check evaluates (default {FINAL_BOUND_ITERATIONS:,}; above it the fixed "
                             "per-dtype tolerance, which fails correct long reductions, is used)")
    parser.add_argument("--final-memory-mb", type=int, default=FINAL_MEMORY_MB,
                        help=f"sandbox memory limit of the final check (default {FINAL_MEMORY_MB})")
    parser.add_argument("--final-jobs", type=int, default=3,
                        help="final checks per workload; the table shows the one with the median speedup "
                        "over the source, the JSON row every job's (default 3)")
    parser.add_argument("--json", metavar="OUT.json")
    parser.add_argument("--report", metavar="RUN.json", help="print the table of a saved --json run again "
                        "(the roofline measured now) instead of tuning")
    args = parser.parse_args(argv)
    if args.report:
        report(json.loads(Path(args.report).read_text(encoding="utf-8")), args)
        return 0
    if args.list_split:
        print(describe(SPLIT))
        return 0
    if args.resume and not args.json:
        parser.error("--resume needs --json OUT.json (the rows to resume from)")
    chosen = chosen_workloads(args)
    print(f"running {len(chosen)} workloads ({'--only' if args.only else 'split ' + args.split}, policy "
          f"{args.policy}): {', '.join(w.id for w in chosen)}", file=sys.stderr, flush=True)
    rows: list[dict] = []
    if args.resume and Path(args.json).is_file():
        rows = [r for r in json.loads(Path(args.json).read_text(encoding="utf-8"))
                if r.get("policy", "rule") == args.policy]
        done = {r["id"] for r in rows}
        print(f"resuming: {len(done)} rows already in {args.json}", file=sys.stderr, flush=True)
        chosen = [w for w in chosen if w.id not in done]
    before = machine_peaks()
    for info in chosen:
        print(f"tuning {info.id} ...", file=sys.stderr, flush=True)
        try:
            rows.append(run_one(info, args))
            # each row as soon as it is measured, so a long run that is stopped still says something
            print("  row " + json.dumps(rows[-1], default=str), file=sys.stderr, flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(rows, indent=2, default=str) + "\n", encoding="utf-8")
        except Exception as exc:
            print(f"  {info.id} skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
    report(rows, args, [before])
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
