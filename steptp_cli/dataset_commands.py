"""``steptp generate``, ``steptp filter`` and ``steptp render``: step records from sources to SFT rows.

* ``generate WORKLOAD_OR_LEIR... --depth D --seed S [--workers N] [--breadth-cap K] [--shapes K] -o OUT``
  — seeded breadth-first generation (``dataset.generation``); every step verified against its
  parent in the warm sandbox pool (``verifier.verify``), ``N`` verifications at a time; resumable (run
  the same command again after an interruption). Sources: built-in workload ids (``level1/softmax``),
  ``level1``/``level2``/``level3``/``all`` for a whole level or suite, ``.py`` problem files, ``.leir`` files.
* ``filter STEPS.jsonl [--policy default] [--seed S] -o KEPT.jsonl`` — the balancing policy
  (``dataset.filtering``), printing the per-strategy distribution before and after.
* ``render STEPS.jsonl --format messages|prompt-completion [--multi-answer K] [--metadata] -o SFT.jsonl``
  — SFT rows (``dataset.rendering``); ``--format preference|unpaired`` — preference rows from one state's
  steps (``dataset.preference``).
* ``lint STEPS.jsonl...`` — every trace checked against its record's numbers (``dataset.trace_lint``):
  each problem with its step id, a summary per file, exit 1 when any.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError

#: A drawn shape variant may cost at most this many times the default variant's statement executions.
MAX_VARIANT_COST_RATIO = 4.0
#: Timing of a step and its parent with ``generate --time``: repeats, each lasting at least this long.
TIME_REPEATS = 7
TIME_MIN_REPEAT_MS = 20.0


def register(subparsers) -> None:
    gen = subparsers.add_parser("generate", help="generate verified step records breadth-first",
                                description="Seeded breadth-first generation of verified steps.")
    gen.add_argument("sources", nargs="+", metavar="WORKLOAD_OR_LEIR",
                     help="workload id, level1|level2|level3|all, a .py problem file or a .leir file")
    gen.add_argument("--depth", type=int, default=1, help="steps from each source (default 1)")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--workers", type=int, default=1, help="verifications at a time (default 1)")
    gen.add_argument("--breadth-cap", type=int, default=8, metavar="K",
                     help="states expanded per source and depth (default 8)")
    gen.add_argument("--params-per-site", type=int, default=1, metavar="P",
                     help="parameter combinations per site (all when at most P; default 1)")
    gen.add_argument("--max-steps-per-state", type=int, default=None, metavar="M",
                     help="a balanced seeded subset of at most M steps per state (default: all)")
    gen.add_argument("--shapes", type=int, default=1, metavar="K",
                     help="shape variants per workload, the first being the defaults (default 1)")
    gen.add_argument("--strategy", action="append", dest="strategies", metavar="S",
                     help="only these strategies (repeatable; default all registered)")
    gen.add_argument("--dtype", choices=("f32", "f64", "f16"), default="f32")
    gen.add_argument("--no-verify", action="store_true", help="record steps unverified (status unverified)")
    gen.add_argument("--no-cache", action="store_true", help="do not use the verification result cache")
    gen.add_argument("--no-special-values", action="store_true",
                     help="skip the second verification of N steps on special, large-magnitude and "
                          "large-offset (1000 + N(0,1)) inputs")
    gen.add_argument("--target", default="llvm")
    gen.add_argument("--time", action="store_true",
                     help="time each verified step against its parent: a measured effect on every step")
    gen.add_argument("--no-state-reuse", action="store_true",
                     help="the old verification path: no per-state reuse of the parent's timing, and the "
                          "error bound evaluated for exact steps too (a baseline for bench/generate.py)")
    gen.add_argument("--no-progress", action="store_true")
    gen.add_argument("-o", "--output", required=True, metavar="STEPS.jsonl")
    gen.set_defaults(handler=run_generate)

    filt = subparsers.add_parser("filter", help="balance step records with a seeded policy",
                                 description="Apply a filtering policy; print the distribution before/after.")
    filt.add_argument("file", metavar="STEPS.jsonl")
    filt.add_argument("--policy", default="default")
    filt.add_argument("--seed", type=int, default=0)
    filt.add_argument("-o", "--output", required=True, metavar="KEPT.jsonl")
    filt.add_argument("--negatives", metavar="NEGATIVES.jsonl",
                      help="also write the harmful (slower) and failed steps, for preference data")
    filt.set_defaults(handler=run_filter)

    ren = subparsers.add_parser("render", help="render step records as SFT rows",
                                description="Verified steps as supervised fine-tuning rows.")
    ren.add_argument("file", metavar="STEPS.jsonl")
    ren.add_argument("--format", choices=("messages", "prompt-completion", "preference", "unpaired",
                                          "trajectory"),
                     default="messages",
                     help="SFT rows (messages, conversational prompt-completion) or preference rows: "
                          "prompt/chosen/rejected pairs from one state, or unpaired completion/label rows "
                          "(give the file with the failed and slower steps too, e.g. generate's output); "
                          "trajectory: one multi-turn conversation per chain of steps (a tune run, a "
                          "generated chain)")
    ren.add_argument("--metadata", action="store_true",
                     help="add a `meta` column per row (step id, workload, strategy, level, effect...); "
                          "preference rows always carry it")
    ren.add_argument("--pairs-per-state", type=int, default=3, metavar="N",
                     help="preference: at most N rejected answers per state (default 3)")
    ren.add_argument("--multi-answer", type=int, default=1, metavar="K",
                     help="one row per state with K alternative steps (default 1: one row per step)")
    ren.add_argument("--seed", type=int, default=0)
    ren.add_argument("-o", "--output", required=True, metavar="SFT.jsonl")
    ren.set_defaults(handler=run_render)

    lint = subparsers.add_parser("lint", help="check every trace's numbers and claims against its record",
                                 description="Check that no trace states a number or a claim its record "
                                             "contradicts, and that no two records share a rationale "
                                             "verbatim across before states or strategies.")
    lint.add_argument("files", nargs="+", metavar="STEPS.jsonl")
    lint.add_argument("--partial", action="store_true",
                      help="the file is a selection of a generation (a filter's output, an export split): "
                           "selection lines are checked against the candidates it still holds")
    lint.set_defaults(handler=run_lint)


# -------------------------------------------------------------------------------------------- sources


def _dominant_dtype(program) -> str:
    floats = [d.dtype for d in program.signature.tensors if d.dtype.startswith(("f", "bf"))]
    return max(sorted(set(floats)), key=floats.count) if floats else "f32"


def _leir_source(path: Path):
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from leir.analysis import program_info
    from leir.program import load_program, program_hash

    program = load_program(path.read_text(encoding="utf-8"))
    info = program_info(program)
    if not info.ok:
        raise UsageError(f"{path}: invalid program: {info.errors[0]}")
    return Source(SourceInfo(path.name, None, None, _dominant_dtype(program), 0, {}, program_hash(program)),
                  program)


def _expand(spec: str) -> list[str]:
    from workloads.registry import LEVELS, list_workloads

    if spec == "all":
        return [w.id for w in list_workloads()]
    if spec in {f"level{level}" for level in LEVELS}:
        return [w.id for w in list_workloads(int(spec.removeprefix("level")))]
    return [spec]


def load_sources(specs: list[str], *, shapes: int = 1, seed: int = 0, dtype: str = "f32",
                 warn: Callable[[str], None] = print) -> list:
    """Source states for ``specs``: workloads at ``shapes`` seeded variants each, files as they are."""
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from frontend import translate_file
    from leir.program import program_hash
    from verifier.reference import iteration_count
    from workloads.registry import WorkloadError, get_workload, read_metadata
    from workloads.variants import shape_variants

    sources = []
    for spec in [s for raw in specs for s in _expand(raw)]:
        path = Path(spec)
        if path.suffix == ".leir":
            if not path.is_file():
                raise UsageError(f"no such file: {spec}")
            sources.append(_leir_source(path))
            continue
        try:
            info = read_metadata(path) if path.suffix == ".py" and path.is_file() else get_workload(spec)
        except WorkloadError as exc:
            if path.suffix == ".py" and path.is_file():
                info = None  # a problem file without STEPTP metadata: its defaults only
            else:
                raise UsageError(str(exc)) from None
        variants = shape_variants(info, shapes, seed) if info is not None else [{}]
        base_cost = None
        for index, sets in enumerate(variants):
            try:
                # dead blocks kept: the source computes them, and removing them is a step of its own
                program = translate_file(info.path if info else path, sets=sets, dtype=dtype,
                                         keep_dead_blocks=True).program
            except Exception as exc:
                what = sets or "defaults"
                first_line = (str(exc).splitlines() or [""])[0]
                warn(f"steptp generate: {spec} with {what} skipped: {type(exc).__name__}: {first_line}")
                continue
            cost = iteration_count(program)
            if base_cost is None:
                base_cost = cost
            elif cost > MAX_VARIANT_COST_RATIO * base_cost:
                warn(f"steptp generate: {spec} with {sets} skipped: {cost:,} statement executions > "
                     f"{MAX_VARIANT_COST_RATIO:g}x the defaults'")
                continue
            workload = info.id if info is not None else path.stem
            sources.append(Source(SourceInfo(f"{workload}@{dtype}#{index}", workload,
                                             info.level if info is not None else None, dtype, index, sets,
                                             program_hash(program)), program))
    return sources


def make_verify(*, workers: int, cache: bool, target: str = "llvm", cache_dir: str | None = None,
                time: bool = False, state_reuse: bool = True):
    """``(verify(after, before) -> dict, pool)``: ``verifier.verify`` on a warm pool of ``workers``.

    ``time``: each step is timed against its parent (``TIME_REPEATS`` repeats of ``TIME_MIN_REPEAT_MS``).
    ``state_reuse``: what one state's children share is computed once per state and worker — the parent's
    timing, besides its kernel, outputs and error bound (which the warm worker always reuses) — and a step
    whose outputs equal its parent's bit for bit skips the error bound. ``False`` is the old path.
    """
    from verifier import cache as cache_mod
    from verifier.sandbox import WorkerPool
    from verifier.verify import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT_S, WARM_MODULES, verify

    pool = WorkerPool(workers, warm_modules=WARM_MODULES, timeout=DEFAULT_TIMEOUT_S,
                      memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB)
    result_cache = cache_mod.ResultCache(cache_dir) if cache else None

    def verify_step(after, before, *, special_values: bool = False, large_offset: bool = False):
        second = special_values or large_offset  # the second verification of an N step: never timed
        return verify(after, parent=before, reference="parent", target=target, pool=pool,
                      special_values=special_values, large_offset=large_offset,
                      cache=result_cache if result_cache is not None else False,
                      time=time and not second, repeats=TIME_REPEATS,
                      min_repeat_ms=TIME_MIN_REPEAT_MS,
                      reuse_timings=time and state_reuse and not second,
                      equal_skips_bound=state_reuse).to_json()

    return verify_step, pool


class _Progress:
    """A tqdm bar whose total grows as levels are planned (so the ETA covers the known work)."""

    def __init__(self, enabled: bool):
        from tqdm import tqdm

        self.bar = tqdm(total=0, unit="step", disable=not enabled, dynamic_ncols=True, file=sys.stderr)

    def __call__(self, done: int, planned: int) -> None:
        if planned:
            self.bar.total += planned
            self.bar.refresh()
        if done:
            self.bar.update(done)

    def close(self) -> None:
        self.bar.close()


# ------------------------------------------------------------------------------------------- commands


def run_generate(args: argparse.Namespace) -> int:
    from dataset.generation import GenerationConfig, generate, second_verification
    from strategies import get_strategy
    from strategies.registry import UnknownStrategyError

    for name in args.strategies or ():
        try:
            get_strategy(name)
        except UnknownStrategyError as exc:
            raise UsageError(str(exc)) from None
    if args.depth < 1 or args.workers < 1 or args.breadth_cap < 1 or args.shapes < 1:
        raise UsageError("--depth, --workers, --breadth-cap and --shapes must be at least 1")
    def warn(text: str) -> None:
        print(text, file=sys.stderr)

    sources = load_sources(args.sources, shapes=args.shapes, seed=args.seed, dtype=args.dtype, warn=warn)
    if not sources:
        print("steptp generate: no source could be loaded", file=sys.stderr)
        return EXIT_INVALID
    config = GenerationConfig(depth=args.depth, seed=args.seed, breadth_cap=args.breadth_cap,
                              params_per_site=args.params_per_site,
                              max_steps_per_state=args.max_steps_per_state,
                              strategies=tuple(args.strategies) if args.strategies else None)
    verify, pool, verify_special = (None, None, None)
    if not args.no_verify:
        verify, pool = make_verify(workers=args.workers, cache=not args.no_cache, target=args.target,
                                   time=args.time, state_reuse=not args.no_state_reuse)
        if not args.no_special_values:
            verify_special = second_verification(verify)
    elif args.time:
        raise UsageError("--time needs verification (drop --no-verify)")
    from tuner.effect import feature_function

    progress = _Progress(not args.no_progress)
    try:
        summary = generate(sources, config, args.output, verify=verify, workers=args.workers,
                           progress=progress, verify_special=verify_special,
                           features=feature_function(args.target), target=args.target)
    finally:
        progress.close()
        if pool is not None:
            pool.close()
    print(f"{len(sources)} source state(s); {summary.states} state(s) expanded; {summary.written} step(s) "
          f"written, {summary.resumed} already in {args.output}; verified {summary.verified}, failed "
          f"{summary.failed}, unverified {summary.unverified}; {summary.duplicates} duplicate "
          "(before, after) pair(s) left to the step that produced them first", file=sys.stderr)
    for name, row in summary.by_strategy.items():
        print(f"  {name:34} verified {row['verified']:5d}  failed {row['failed']:5d}"
              + (f"  unverified {row['unverified']:5d}" if row["unverified"] else ""), file=sys.stderr)
    return EXIT_OK


def _records(file: str) -> list:
    from dataset.records import RecordError, load_records

    if not Path(file).is_file():
        raise UsageError(f"no such file: {file}")
    try:
        return list(load_records(file))
    except RecordError as exc:
        print(f"steptp: {exc}", file=sys.stderr)
        raise _Invalid from None


class _Invalid(Exception):
    pass


def _write_jsonl(path: str, rows) -> int:
    from dataset.records import dumps

    count = 0
    try:
        with open(path, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(dumps(row) + "\n")
                count += 1
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from exc
    return count


def run_filter(args: argparse.Namespace) -> int:
    from dataset.filtering import apply_policy, distribution_table, effects_table, get_policy

    try:
        policy = get_policy(args.policy)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    try:
        records = _records(args.file)
    except _Invalid:
        return EXIT_INVALID
    result = apply_policy(records, policy, seed=args.seed)
    count = _write_jsonl(args.output, result.kept)
    print(f"policy {policy.name}: {policy.description}")
    print(distribution_table(result, policy))
    print(effects_table(result))
    print(f"kept {count} of {len(records)} record(s) -> {args.output}", file=sys.stderr)
    if args.negatives:
        negatives = _write_jsonl(args.negatives, result.negatives)
        print(f"{negatives} negative(s) (slower or failed) -> {args.negatives}", file=sys.stderr)
    elif result.negatives:
        print(f"{len(result.negatives)} negative(s) (slower or failed) not written (--negatives)",
              file=sys.stderr)
    return EXIT_OK


def run_render(args: argparse.Namespace) -> int:
    from dataset.preference import PREFERENCE_FORMATS, render_preference
    from dataset.rendering import render

    if args.metadata and args.multi_answer > 1:
        raise UsageError("--metadata describes one answered step per row; drop --multi-answer")
    try:
        records = _records(args.file)
    except _Invalid:
        return EXIT_INVALID
    if args.format == "trajectory":
        from dataset.trajectories import render_trajectories

        rows = render_trajectories(records)
    elif args.format in PREFERENCE_FORMATS:
        rows = render_preference(records, args.format, seed=args.seed, pairs_per_state=args.pairs_per_state)
    else:
        rows = render(records, args.format, multi_answer=args.multi_answer, seed=args.seed,
                      metadata=args.metadata)
    count = _write_jsonl(args.output, rows)
    print(f"wrote {count} {args.format} row(s) to {args.output}", file=sys.stderr)
    return EXIT_OK if count else EXIT_INVALID



def run_lint(args: argparse.Namespace) -> int:
    from dataset.trace_lint import lint, summarize

    total = 0
    for file in args.files:
        try:
            records = _records(file)
        except _Invalid:
            return EXIT_INVALID
        problems = lint(records, partial=args.partial)
        for problem in problems:
            print(f"{file}: {problem}")
        print(f"{file}: {summarize(records).line(problems)}")
        if not args.partial and any("the number of candidates" in p.message for p in problems):
            print(f"{file}: a filtered file or an export split holds fewer candidates than were generated: "
                  "lint it with --partial", file=sys.stderr)
        total += len(problems)
    return EXIT_INVALID if total else EXIT_OK
