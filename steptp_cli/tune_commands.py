"""``steptp tune`` (multi-step search with a rule, LLM or replay policy) and ``steptp evaluate``.

``tune FILE.leir|WORKLOAD --algo beam --policy rule|llm|replay --budget verifications=N,seconds=S
[--width K] [--seed S] -o RUN.jsonl`` — every candidate verified against its parent and timed against the
source on the warm sandbox pool; a live progress line on stderr; writes ``RUN.jsonl`` (step records of
every measured step), ``RUN.summary.json`` (best state and path) and, for ``--policy llm``,
``RUN.transcript.jsonl`` (every prompt and raw response). Exit 0 when the run finished (even without an
improvement), 1 when the source could not be loaded.

``evaluate STEPS.jsonl --url URL --model M [--limit N] [--json OUT.json]`` — single-step rates of a model
on an exported split (``tuner.evaluate``), per strategy and level, as a table (and JSON).

``evaluate-multi WORKLOAD... --algos beam,greedy --budgets 4,8,16 [--policy rule|llm] [--eager] -o OUT``
— multi-step evaluation (``tuner.multistep``): per workload and algorithm the best speedup within each
verification budget; mean/median/max/geomean and fast_1 per algorithm and budget as a table, and
``OUT.csv``, ``OUT.svg`` (speedup against budget) and ``OUT.json`` (every curve).
"""

from __future__ import annotations

import argparse
import os
import sys

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError
from verifier.targets import TUNING_TARGET


def register(subparsers) -> None:
    tune = subparsers.add_parser("tune", help="multi-step search for a faster verified program",
                                 description="Search over verified strategy steps for the fastest program.")
    tune.add_argument("source", metavar="FILE.leir|WORKLOAD", help="a .leir file or a workload id")
    tune.add_argument("--algo", choices=("greedy", "beam", "bfs", "dfs", "mcts", "chain"), default="beam")
    tune.add_argument("--policy", choices=("rule", "learned", "llm", "replay"), default="rule")
    tune.add_argument("--policy-model", metavar="MODEL.json",
                      help="--policy learned: the model steptp fit-policy wrote")
    tune.add_argument("--budget", default="verifications=40",
                      help="verifications=N,policy_calls=N,seconds=S (default verifications=40)")
    tune.add_argument("--width", type=int, default=4, help="beam width (default 4)")
    tune.add_argument("--branch", type=int, default=8, help="proposals measured per expansion (default 8)")
    tune.add_argument("--max-depth", type=int, default=8)
    tune.add_argument("--rollout-depth", type=int, default=0,
                      help="MCTS rule-policy rollout steps (default 0)")
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--dtype", choices=("f32", "f64", "f16"), default="f32")
    tune.add_argument("--target", default=TUNING_TARGET,
                      help="llvm-host (default: this CPU's vector ISA), llvm (baseline x86-64), cuda[:sm_XX]")
    tune.add_argument("--repeats", type=int, default=5, help="timing repeats per program (default 5)")
    tune.add_argument("--min-repeat-ms", type=float, default=20.0)
    tune.add_argument("--no-cache", action="store_true", help="do not use the verification result cache")
    tune.add_argument("--replay", metavar="RUN.jsonl", help="records to replay (--policy replay)")
    tune.add_argument("--url", default=os.environ.get("STEPTP_LLM_URL"),
                      help="OpenAI-compatible base URL, e.g. http://host:8000/v1 (env STEPTP_LLM_URL)")
    tune.add_argument("--model", default=os.environ.get("STEPTP_LLM_MODEL"),
                      help="model name (env STEPTP_LLM_MODEL)")
    tune.add_argument("--api-key-env", default="STEPTP_LLM_KEY", help="env variable holding the key")
    tune.add_argument("--samples", type=int, default=1, help="completions per LLM call (default 1)")
    tune.add_argument("--temperature", type=float, default=0.0)
    tune.add_argument("--request-timeout", type=float, default=120.0)
    tune.add_argument("--no-progress", action="store_true")
    tune.add_argument("-o", "--output", required=True, metavar="RUN.jsonl")
    tune.set_defaults(handler=run_tune)
    register_evaluate(subparsers)
    register_evaluate_multi(subparsers)
    register_fit_policy(subparsers)
    split = subparsers.add_parser("split-workloads", help="print the seeded fitting / held-out split",
                                  description="The built-in workloads on each side of tuner.splits' split.")
    split.add_argument("--seed", type=int, default=0)
    split.set_defaults(handler=run_split)


def run_split(args: argparse.Namespace) -> int:
    from tuner.splits import describe, workload_split

    print(describe(workload_split(args.seed)))
    return EXIT_OK


def register_fit_policy(subparsers) -> None:
    fit = subparsers.add_parser(
        "fit-policy", help="fit the learned policy's step-ranking model on fitting workloads' step records",
        description="Fit a ridge model of log(speedup) on verified step records with effect estimates "
                    "(steptp generate --time). Records of held-out workloads (tuner.splits) are refused.")
    fit.add_argument("files", nargs="+", metavar="STEPS.jsonl")
    fit.add_argument("--seed", type=int, default=0, help="the learner's seed (default 0)")
    fit.add_argument("--split-seed", type=int, default=0, help="the workload split's seed (default 0)")
    fit.add_argument("--alpha", type=float, default=1.0, help="ridge penalty (default 1.0)")
    fit.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    fit.set_defaults(handler=run_fit_policy)


def run_fit_policy(args: argparse.Namespace) -> int:
    from dataset.records import load_records
    from tuner import learned
    from tuner.splits import workload_split

    records = []
    for path in args.files:
        if not os.path.isfile(path):
            raise UsageError(f"no such file: {path}")
        records.extend(load_records(path))
    split = workload_split(args.split_seed)
    try:
        items = learned.examples(records, split.heldout)
        model = learned.fit(items, seed=args.seed, alpha=args.alpha, split_seed=args.split_seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    learned.save(model, args.output)
    training = model["training"]
    print(f"fitted on {training['examples']} steps of {len(training['workloads'])} fitting workloads "
          f"(of {len(records)} records); rmse {training['rmse_log']:.3g} in log speedup -> {args.output}")
    return EXIT_OK


def make_policy(args: argparse.Namespace, program_name: str):
    from tuner.policies import LLMPolicy, ReplayPolicy, RulePolicy

    if args.policy == "rule":
        return RulePolicy(seed=args.seed, measured={})
    if args.policy == "learned":
        from tuner.policies.learned import LearnedPolicy

        if not args.policy_model:
            raise UsageError("--policy learned needs --policy-model MODEL.json (steptp fit-policy writes it)")
        try:
            return LearnedPolicy(args.policy_model, seed=args.seed, measured={})
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.policy == "replay":
        if not args.replay:
            raise UsageError("--policy replay needs --replay RUN.jsonl")
        if not os.path.isfile(args.replay):
            raise UsageError(f"no such file: {args.replay}")
        return ReplayPolicy(args.replay)
    if not args.url or not args.model:
        raise UsageError("--policy llm needs --url and --model (or STEPTP_LLM_URL / STEPTP_LLM_MODEL)")
    return LLMPolicy(args.url, args.model, api_key=os.environ.get(args.api_key_env),
                     program_name=program_name,
                     temperature=args.temperature, samples=args.samples, timeout=args.request_timeout,
                     seed=args.seed)


def run_tune(args: argparse.Namespace) -> int:
    from steptp_cli.dataset_commands import load_sources
    from tuner.measure import Measurer
    from tuner.run import tune, write_run
    from tuner.search.base import Budget

    try:
        budget = Budget.parse(args.budget)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if min(args.width, args.branch, args.max_depth) < 1:
        raise UsageError("--width, --branch and --max-depth must be at least 1")
    if args.source in ("level1", "level2", "level3", "all"):
        raise UsageError("tune takes one program: a .leir file or one workload id")
    sources = load_sources([args.source], dtype=args.dtype, warn=lambda text: print(text, file=sys.stderr))
    if not sources:
        print(f"steptp tune: {args.source} could not be loaded", file=sys.stderr)
        return EXIT_INVALID
    source = sources[0]
    policy = make_policy(args, source.info.workload or source.info.id)
    options: dict = {}
    if args.algo == "beam":
        options["width"] = args.width
    if args.algo == "mcts" and args.rollout_depth:
        from tuner.policies import RulePolicy

        options.update(rollout_depth=args.rollout_depth, rollout_policy=RulePolicy(seed=args.seed))
    show = not args.no_progress and sys.stderr.isatty()

    def progress(search) -> None:
        if show:
            print("\r" + search.progress_line().ljust(100), end="", file=sys.stderr, flush=True)

    measurer = Measurer(source.program, target=args.target, cache=not args.no_cache, repeats=args.repeats,
                        min_repeat_ms=args.min_repeat_ms)
    try:
        search = tune(source, policy, measurer, budget, algo=args.algo, seed=args.seed, branch=args.branch,
                      max_depth=args.max_depth, options=options, progress=progress)
    finally:
        measurer.close()
    if show:
        print(file=sys.stderr)
    paths = write_run(search, args.output)
    print(search.progress_line(), file=sys.stderr)
    for node in search.best_path()[1:]:
        print(f"  {node.depth}. {node.label()}  -> {node.speedup:.3f}x", file=sys.stderr)
    print("wrote " + ", ".join(str(p) for p in paths.values()), file=sys.stderr)
    return EXIT_OK


# ------------------------------------------------------------------------------------------ evaluate


def register_evaluate(subparsers) -> None:
    ev = subparsers.add_parser("evaluate", help="single-step rates of a model on an exported split",
                               description="Ask a model once per verified step of a split; print the "
                                           "answered/different/build/execute/pass/equal_pass rates.")
    ev.add_argument("split", metavar="STEPS.jsonl",
                    help="step records (an export's split or generate output)")
    ev.add_argument("--url", default=os.environ.get("STEPTP_LLM_URL"))
    ev.add_argument("--model", default=os.environ.get("STEPTP_LLM_MODEL"))
    ev.add_argument("--api-key-env", default="STEPTP_LLM_KEY")
    ev.add_argument("--limit", type=int, default=None, help="at most N prompts")
    ev.add_argument("--request-timeout", type=float, default=120.0)
    ev.add_argument("--target", default="llvm")
    ev.add_argument("--json", metavar="OUT.json", help="also write the rates and every graded item")
    ev.set_defaults(handler=run_evaluate)


def run_evaluate(args: argparse.Namespace) -> int:
    import json

    from dataset.records import RecordError, load_records
    from steptp_cli.dataset_commands import make_verify
    from tuner.evaluate import evaluate_single, rates_table
    from tuner.policies import LLMPolicy

    if not args.url or not args.model:
        raise UsageError("evaluate needs --url and --model (or STEPTP_LLM_URL / STEPTP_LLM_MODEL)")
    if not os.path.isfile(args.split):
        raise UsageError(f"no such file: {args.split}")
    try:
        records = list(load_records(args.split))
    except RecordError as exc:
        print(f"steptp evaluate: {exc}", file=sys.stderr)
        return EXIT_INVALID
    policy = LLMPolicy(args.url, args.model, api_key=os.environ.get(args.api_key_env),
                       timeout=args.request_timeout)
    verify, pool = make_verify(workers=1, cache=True, target=args.target)
    try:
        report = evaluate_single(records, policy, verify, limit=args.limit)
    finally:
        pool.close()
    print(rates_table(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, sort_keys=True)
    return EXIT_OK


# ------------------------------------------------------------------------------------ evaluate-multi


def register_evaluate_multi(subparsers) -> None:
    ev = subparsers.add_parser("evaluate-multi", help="best speedup per algorithm within budgets, and a plot",
                               description="Run each search algorithm on each workload up to the largest "
                                           "verification budget; report the best speedup within every "
                                           "budget (mean, median, max, geomean, fast_1) as a table, CSV, "
                                           "SVG plot and JSON.")
    ev.add_argument("sources", nargs="+", metavar="WORKLOAD|FILE.leir",
                    help="workload ids (level1, level2 for whole suites) or .leir files")
    ev.add_argument("--algos", default="greedy,beam", help="comma-separated (default greedy,beam)")
    ev.add_argument("--budgets", default="4,8,16", help="verification budgets, comma-separated")
    ev.add_argument("--policy", choices=("rule", "learned", "llm"), default="rule")
    ev.add_argument("--policy-model", metavar="MODEL.json",
                    help="--policy learned: the model steptp fit-policy wrote")
    ev.add_argument("--width", type=int, default=4, help="beam width (default 4)")
    ev.add_argument("--branch", type=int, default=8)
    ev.add_argument("--max-depth", type=int, default=8)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--dtype", choices=("f32", "f64", "f16"), default="f32")
    ev.add_argument("--target", default=TUNING_TARGET, help=f"as for tune (default {TUNING_TARGET})")
    ev.add_argument("--repeats", type=int, default=5)
    ev.add_argument("--min-repeat-ms", type=float, default=20.0)
    ev.add_argument("--no-cache", action="store_true")
    ev.add_argument("--shape-t", type=float, default=None, metavar="T",
                    help="run built-in workloads T (0..1) of the way from default to paper sizes; at the "
                         "tiny defaults eager's per-call overhead makes fast_1 meaningless")
    ev.add_argument("--eager", action="store_true",
                    help="time PyTorch eager once per workload for fast_1 (workloads with a module only)")
    ev.add_argument("--url", default=os.environ.get("STEPTP_LLM_URL"))
    ev.add_argument("--model", default=os.environ.get("STEPTP_LLM_MODEL"))
    ev.add_argument("--api-key-env", default="STEPTP_LLM_KEY")
    ev.add_argument("--samples", type=int, default=1)
    ev.add_argument("--temperature", type=float, default=0.0)
    ev.add_argument("--request-timeout", type=float, default=120.0)
    ev.add_argument("-o", "--output", required=True, metavar="OUT",
                    help="writes OUT.csv, OUT.svg and OUT.json")
    ev.set_defaults(handler=run_evaluate_multi, replay=None)


def _positive_ints(text: str, what: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a comma-separated list of whole numbers") from None
    if not values or min(values) < 1:
        raise UsageError(f"{what}: give positive whole numbers, e.g. 4,8,16")
    return sorted(set(values))


def _scaled(source, t: float, dtype: str):
    """A built-in workload's source re-translated at ``scaled_shapes(info, t)``; files stay as they are."""
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from frontend import translate_file
    from leir.program import program_hash
    from workloads.registry import WorkloadError, get_workload
    from workloads.variants import scaled_shapes

    if not source.info.workload:
        return source
    try:
        info = get_workload(source.info.workload)
    except WorkloadError:
        return source
    sets = scaled_shapes(info, t)
    program = translate_file(info.path, sets=sets, dtype=dtype, keep_dead_blocks=True).program
    return Source(SourceInfo(f"{info.id}@{dtype}#t{t:g}", info.id, info.level, dtype, 0, sets,
                             program_hash(program)), program)


def _eager_ratio(source, pool, args):
    """How many times the source program's time eager's is (``speedup_vs_torch`` of the source)."""
    from verifier.reference import TorchSourceReference
    from verifier.verify import verify
    from workloads.registry import WorkloadError, get_workload

    if not source.info.workload:
        return None
    try:
        path = get_workload(source.info.workload).path
    except WorkloadError:
        return None
    result = verify(source.program, source=source.program, time=True, pool=pool, cache=False,
                    reference=TorchSourceReference(path, dict(source.info.sets), source.info.dtype),
                    repeats=args.repeats, min_repeat_ms=args.min_repeat_ms)
    return result.speedup_vs_torch


def run_evaluate_multi(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from steptp_cli.dataset_commands import load_sources
    from tuner.measure import Measurer
    from tuner.multistep import CSV_COLUMNS, evaluate_multi, write_csv
    from tuner.search import ALGORITHMS
    from tuner.svgplot import speedup_plot

    algorithms = [a.strip() for a in args.algos.split(",") if a.strip()]
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise UsageError(f"--algos: unknown {', '.join(unknown) or 'none given'}; known: "
                         f"{', '.join(ALGORITHMS)}")
    budgets = _positive_ints(args.budgets, "--budgets")
    if min(args.width, args.branch, args.max_depth) < 1:
        raise UsageError("--width, --branch and --max-depth must be at least 1")
    if args.policy == "llm" and (not args.url or not args.model):
        raise UsageError("--policy llm needs --url and --model (or STEPTP_LLM_URL / STEPTP_LLM_MODEL)")
    if args.shape_t is not None and not 0.0 <= args.shape_t <= 1.0:
        raise UsageError("--shape-t: give T between 0 and 1")
    sources = load_sources(args.sources, dtype=args.dtype, warn=lambda text: print(text, file=sys.stderr))
    if args.shape_t is not None:
        sources = [_scaled(source, args.shape_t, args.dtype) for source in sources]
    if not sources:
        print("steptp evaluate-multi: no source could be loaded", file=sys.stderr)
        return EXIT_INVALID

    def make_measurer(source):
        return Measurer(source.program, target=args.target, cache=not args.no_cache, repeats=args.repeats,
                        min_repeat_ms=args.min_repeat_ms)

    eager = None
    pool = None
    if args.eager:
        from verifier.sandbox import WorkerPool
        from verifier.verify import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT_S, WARM_MODULES

        pool = WorkerPool(1, warm_modules=WARM_MODULES, timeout=DEFAULT_TIMEOUT_S,
                          memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB)

        def eager(source):
            return _eager_ratio(source, pool, args)

    try:
        report = evaluate_multi(
            sources, algorithms, budgets,
            make_policy=lambda source: make_policy(args, source.info.workload or source.info.id),
            make_measurer=make_measurer, eager_ratio=eager, options={"beam": {"width": args.width}},
            seed=args.seed, branch=args.branch, max_depth=args.max_depth,
            progress=lambda line: print(line, file=sys.stderr, flush=True))
    finally:
        if pool is not None:
            pool.close()
    stem = Path(args.output)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = {"csv": Path(f"{stem}.csv"), "svg": Path(f"{stem}.svg"), "json": Path(f"{stem}.json")}
    write_csv(report["summary"], paths["csv"])
    paths["svg"].write_text(speedup_plot(report["summary"]), encoding="utf-8")
    paths["json"].write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(" ".join(f"{c:>9}" for c in CSV_COLUMNS))
    for row in report["summary"]:
        cells = ["-" if row[c] is None else f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c])
                 for c in CSV_COLUMNS]
        print(" ".join(f"{cell:>9}" for cell in cells))
    print("wrote " + ", ".join(str(p) for p in paths.values()), file=sys.stderr)
    return EXIT_OK
