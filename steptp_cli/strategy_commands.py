"""``steptp strategies``, ``steptp candidates`` and ``steptp apply``: the strategy engine on ``.leir`` files.

* ``strategies [--level L] [--json | --markdown]`` — the registry as a table (``--markdown`` prints the
  generated ``docs/strategies.md``);
* ``candidates FILE [--strategy S] [--json]`` — every legal site of every (or one) strategy, numbered as
  ``apply --site`` takes them, with each site's free parameters and their legal values;
* ``apply FILE STRATEGY [--site N] [--param k=v ...] -o OUT.leir`` — apply one step through the engine,
  write the after-state and print the reasoning trace. A refusal (no such site, a precondition that does
  not hold, an illegal parameter value) exits 1 with the strategy's reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError


def register(subparsers) -> None:
    table = subparsers.add_parser("strategies", help="list the registered strategies",
                                  description="The strategy registry: number, name, level, exactness.")
    table.add_argument("--level", choices=("graph", "loop", "memory", "math"))
    fmt = table.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object per strategy")
    fmt.add_argument("--markdown", action="store_true",
                     help="print docs/strategies.md (generated from the registry; takes a minute)")
    table.set_defaults(handler=run_strategies)

    cand = subparsers.add_parser("candidates", help="list the legal sites of the strategies on a program",
                                 description="Every legal site (numbered as apply --site takes them).")
    cand.add_argument("file", metavar="FILE.leir")
    cand.add_argument("--strategy", metavar="S", help="only this strategy")
    cand.add_argument("--json", action="store_true")
    cand.set_defaults(handler=run_candidates)

    apply = subparsers.add_parser("apply", help="apply one strategy at one site and print the trace",
                                  description="Apply STRATEGY at site N of FILE; write the result.")
    apply.add_argument("file", metavar="FILE.leir")
    apply.add_argument("strategy", metavar="STRATEGY")
    apply.add_argument("--site", type=int, default=0, metavar="N", help="site number (default 0)")
    apply.add_argument("--param", action="append", default=[], metavar="K=V", dest="params",
                       help="a parameter value (repeatable); tuples as 1,2,3")
    apply.add_argument("-o", "--output", metavar="OUT.leir", help="where to write the after-state "
                       "(default: print it)")
    apply.add_argument("--json", action="store_true", help="print the step as JSON instead of text")
    apply.set_defaults(handler=run_apply)


# ------------------------------------------------------------------------------------------- helpers


def _program(file: str):
    """The checked program of FILE; check errors are printed and exit 1 (via ``_Invalid``)."""
    from steptp_cli.leir_commands import _parse_and_check, _print_reports, _read

    text, name = _read(file)
    program, _info, reports = _parse_and_check(text)
    if program is None or any(r["severity"] == "error" for r in reports):
        _print_reports(name, text, [r for r in reports if r["severity"] == "error"])
        raise _Invalid(f"{name} is not a valid program")
    return program


class _Invalid(Exception):
    """Input that was read but is wrong: exit 1 with the message."""


def _strategy(name: str):
    from strategies import get_strategy
    from strategies.registry import UnknownStrategyError

    try:
        return get_strategy(name)
    except UnknownStrategyError as exc:
        raise UsageError(str(exc)) from None


def value_text(value) -> str:
    """How a parameter value is written on the command line (tuples as ``1,2,3``)."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def parse_params(texts: list[str], site, strategy: str) -> dict:
    """``k=v`` strings resolved against the site's legal values (so types come from the strategy); a
    parameter the site does not take is the engine's refusal, with its code."""
    from strategies import InvalidParamsError

    specs = {spec.name: spec for spec in site.params}
    chosen = {}
    for text in texts:
        key, sep, raw = text.partition("=")
        if not sep or not key:
            raise UsageError(f"--param takes K=V, got {text!r}")
        if key not in specs:
            raise InvalidParamsError(strategy, f"unknown parameter {key!r}; this site takes: "
                                     f"{', '.join(specs) or 'none'}", "unknown-param", site)
        legal = {value_text(v): v for v in specs[key].values}
        if raw.replace(" ", "") not in legal:
            shown = ", ".join(list(legal)[:20])
            raise InvalidParamsError(strategy, f"{key}={raw} is not legal here; legal: {shown}",
                                     "illegal-param", site)
        chosen[key] = legal[raw.replace(" ", "")]
    return chosen


def _guard(handler):
    """Turn refusals and invalid input into exit 1 with a one-line reason."""
    def wrapped(args: argparse.Namespace) -> int:
        from leir.errors import LeirError
        from strategies import StrategyError

        try:
            return handler(args)
        except _Invalid as exc:
            print(f"steptp {args.command}: {exc}", file=sys.stderr)
        except StrategyError as exc:
            print(f"steptp {args.command}: refused: {exc}", file=sys.stderr)
        except LeirError as exc:
            print(f"steptp {args.command}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    return wrapped


# ------------------------------------------------------------------------------------------ commands


def run_strategies(args: argparse.Namespace) -> int:
    from strategies import all_strategies

    if args.markdown:
        from steptp_cli.strategy_docs import markdown

        sys.stdout.write(markdown())
        return EXIT_OK
    chosen = all_strategies(args.level)
    if args.json:
        for s in chosen:
            info = s.info()
            print(json.dumps({"number": info.number, "name": info.name, "level": info.level.value,
                              "exactness": info.exactness, "summary": info.summary}))
        return EXIT_OK
    print(f"{'#':>3}  {'name':34} {'level':7} {'exact':5}  summary")
    for s in chosen:
        info = s.info()
        print(f"{info.number:>3}  {info.name:34} {info.level.value:7} {info.exactness:5}  {info.summary}")
    print(f"{len(chosen)} strategies", file=sys.stderr)
    return EXIT_OK


@_guard
def run_candidates(args: argparse.Namespace) -> int:
    from strategies import all_strategies, candidates

    program = _program(args.file)
    chosen = [_strategy(args.strategy)] if args.strategy else list(all_strategies())
    rows = []
    for strategy in chosen:
        for index, site in enumerate(candidates(program, strategy)):
            rows.append({"strategy": strategy.name, "site": index, **site.to_json(),
                         "params": {spec.name: [value_text(v) for v in spec.values] for spec in site.params}})
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        params = "; ".join(f"{k} in {{{', '.join(v[:8])}{', …' if len(v) > 8 else ''}}}"
                           for k, v in row["params"].items())
        shown = f"   [{params}]" if params else ""
        print(f"{row['strategy']:34} --site {row['site']:<3} {row['where']}{shown}")
    print(f"{len(rows)} site(s)", file=sys.stderr)
    return EXIT_OK


@_guard
def run_apply(args: argparse.Namespace) -> int:
    from dataset.records import site_json, trace_json
    from leir.program import dump_program
    from strategies import NotApplicableError, apply_strategy, candidates

    program = _program(args.file)
    strategy = _strategy(args.strategy)
    sites = candidates(program, strategy)
    if not 0 <= args.site < len(sites):
        raise NotApplicableError(strategy.name, f"site {args.site} does not exist ({len(sites)} "
                                 f"candidate(s); see steptp candidates {args.file} "
                                 f"--strategy {strategy.name})", "no-such-site")
    params = parse_params(args.params, sites[args.site], strategy.name)
    step = apply_strategy(program, strategy, args.site, params)
    text = dump_program(step.after, comment=f"{strategy.name} at site {args.site} of {Path(args.file).name}")
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from exc
    if args.json:
        print(json.dumps({"strategy": step.strategy, "number": step.number, "level": step.level.value,
                          "site": site_json(step.site, args.site),
                          "params": {k: value_text(v) for k, v in step.params.items()},
                          "exactness": step.exactness.value, "trace": trace_json(step.trace)}, indent=2))
    else:
        print(f"{step.strategy} (#{step.number}, {step.level.value}, {step.exactness.value}) "
              f"at {step.site.where}")
        print()
        print(step.trace.render())
        if not args.output:
            print()
            sys.stdout.write(text)
    if args.output:
        print(f"wrote {args.output}", file=sys.stderr)
    return EXIT_OK
