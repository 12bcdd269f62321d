"""``docs/strategies.md``, generated from the registry so it can never drift from the code.

For each registered strategy: its number, level, exactness and docstring, one real before/after pair
with the trace the engine produced for it (the smallest built-in workload where the strategy applies),
and how many sites it finds over the public corpus and over the built-in suite. The programs are passed
in (``strategies_markdown(suite, corpus)``) so this module needs neither torch nor TVM; the caller that
translates the suite is ``steptp strategies --markdown`` (``steptp_cli.strategy_docs``), and a test
regenerates the file and fails when the committed one differs.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field

from leir.analysis import program_info
from leir.ast import Program
from leir.printer import canonical
from leir.program import signature_text
from strategies.base import ENGINE_REFUSALS, AppliedStep, Strategy, StrategyError
from strategies.engine import apply_strategy
from strategies.registry import all_strategies

REGENERATE = "python -m steptp_cli.strategy_docs --write"
#: Sites tried on the example workload before moving to the next one.
EXAMPLE_SITES_TRIED = 4

Named = tuple[str, Program]


@dataclass
class SiteCounts:
    sites: int = 0
    programs: int = 0
    errors: int = 0
    first_error: str = ""


@dataclass
class StrategySurvey:
    strategy: Strategy
    corpus: SiteCounts = field(default_factory=SiteCounts)
    suite: SiteCounts = field(default_factory=SiteCounts)
    example: tuple[str, int, AppliedStep] | None = None


def _count(strategy: Strategy, programs: Sequence[Named], counts: SiteCounts) -> dict[str, int]:
    per_program = {}
    for name, program in programs:
        try:
            n = len(strategy.candidates(program))
        except Exception as exc:
            counts.errors += 1
            counts.first_error = counts.first_error or f"{name}: {type(exc).__name__}: {exc}"
            continue
        per_program[name] = n
        counts.sites += n
        counts.programs += n > 0
    return per_program


def _example(strategy: Strategy, suite: Sequence[Named],
             per_program: dict[str, int]) -> tuple[str, int, AppliedStep] | None:
    by_size = sorted((len(canonical(p.body)), name, p) for name, p in suite if per_program.get(name))
    for _size, name, program in by_size:
        for index in range(min(EXAMPLE_SITES_TRIED, per_program[name])):
            try:
                return name, index, apply_strategy(program, strategy, index)
            except (StrategyError, Exception):
                continue
    return None


def survey(suite: Sequence[Named], corpus: Sequence[Named]) -> list[StrategySurvey]:
    checked_suite = [(n, p) for n, p in suite if program_info(p).ok]
    checked_corpus = [(n, p) for n, p in corpus if program_info(p).ok]
    result = []
    for strategy in all_strategies():
        item = StrategySurvey(strategy)
        _count(strategy, checked_corpus, item.corpus)
        per_program = _count(strategy, checked_suite, item.suite)
        item.example = _example(strategy, checked_suite, per_program)
        result.append(item)
    return result


def _counts_cell(counts: SiteCounts, total: int) -> str:
    text = f"{counts.sites} ({counts.programs}/{total})"
    return text + (f", {counts.errors} raised" if counts.errors else "")


def _section(item: StrategySurvey) -> list[str]:
    s = item.strategy
    info = s.info()
    lines = [f"## {info.number}. {info.name}", "",
             f"Level **{info.level.value}**, exactness **{info.exactness}**"
             + (f", inverse of {', '.join(f'`{n}`' for n in s.inverse_of)}" if s.inverse_of else "") + ".",
             "", inspect.cleandoc(type(s).__doc__ or "(no docstring)"), "",
             "Refusals: " + ", ".join(f"`{code}`" for code in s.refusals) + ".", ""]
    for label, counts in (("corpus", item.corpus), ("suite", item.suite)):
        if counts.errors:
            lines += [f"**candidates raised** on {counts.errors} {label} program(s), first: "
                      f"`{counts.first_error[:200]}`", ""]
    if item.example is None:
        lines += ["No built-in workload has a site where this strategy applies.", ""]
        return lines
    name, index, step = item.example
    lines += [f"Example: `{name}`, site {index} ({step.site.where})"
              + (", parameters " + ", ".join(f"`{k}={v}`" for k, v in step.params.items())
                 if step.params else "") + f", exactness {step.exactness.value}.", "",
              "Signature:", "", "```", signature_text(step.before.signature).rstrip(), "```", "",
              "Before:", "", "```", canonical(step.before.body), "```", "",
              "After:", "", "```", canonical(step.after.body), "```", "", "Trace:", ""]
    lines += ["> " + line if line else ">" for line in step.trace.render().splitlines()]
    lines.append("")
    return lines


def refusal_rows(strategies: Sequence[Strategy]) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(code, meaning, strategies)`` for every refusal code, the engine's first, then by code; a code two
    strategies declare with different meanings gets one row per meaning."""
    rows: list[tuple[str, str, tuple[str, ...]]] = [(code, meaning, ("(engine)",))
                                                    for code, meaning in ENGINE_REFUSALS.items()]
    declared: dict[tuple[str, str], list[str]] = {}
    for strategy in strategies:
        for code, meaning in strategy.refusals.items():
            declared.setdefault((code, meaning), []).append(strategy.name)
    rows += [(code, meaning, tuple(names)) for (code, meaning), names in sorted(declared.items())]
    return rows


def _refusal_table(strategies: Sequence[Strategy]) -> list[str]:
    lines = ["## Refusal codes", "",
             "A strategy that does not apply raises a `StrategyError` whose stable code says which rule it "
             "broke (`strategies.base`); `steptp apply` prints `refused: strategy: [code] message` and a "
             "generated step's failure reason starts with `[code]`. The engine's codes hold for every "
             "strategy; the others are declared by each strategy's `refusals`.", "",
             "| code | meaning | raised by |", "|---|---|---|"]
    for code, meaning, names in refusal_rows(strategies):
        lines.append(f"| `{code}` | {meaning} | {', '.join(names)} |")
    return lines + [""]


def strategies_markdown(suite: Sequence[Named], corpus: Sequence[Named]) -> str:
    """The whole ``docs/strategies.md`` for the registered strategies."""
    items = survey(suite, corpus)
    lines = ["# Strategies", "",
             f"<!-- Generated from the registry by `{REGENERATE}`; do not edit by hand. -->", "",
             "Every registered strategy of `strategies` (the catalogue is `../shared/STRATEGIES.md`): "
             "its contract, one real step on the smallest built-in workload where it applies (produced by "
             "`apply_strategy`, so the trace is the engine's own), and the number of legal sites over the "
             f"public corpus ({len(corpus)} programs) and the built-in suite ({len(suite)} workloads at "
             "their default shapes, f32). A cell reads `sites (programs with a site/programs)`.", "",
             "| # | strategy | level | exact | corpus sites | suite sites |", "|---|---|---|---|---|---|"]
    for item in items:
        info = item.strategy.info()
        lines.append(f"| {info.number} | [{info.name}](#{info.number}-{info.name}) | "
                     f"{info.level.value} | {info.exactness} | {_counts_cell(item.corpus, len(corpus))} | "
                     f"{_counts_cell(item.suite, len(suite))} |")
    lines.append("")
    lines += _refusal_table([item.strategy for item in items])
    for item in items:
        lines += _section(item)
    return "\n".join(lines).rstrip() + "\n"
