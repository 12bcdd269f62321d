"""One state's possible steps, chosen deterministically, and the attempt to take each one.

``plan_steps`` lists, for one program, every (strategy, site, parameters) the generator will try: all
sites of every registered strategy, and per site either every parameter combination (when there are at
most ``params_per_site``) or that many distinct combinations drawn with an RNG seeded by the run seed,
the state's hash, the strategy and the site — so the choice never depends on what else was planned or
in which order. ``max_steps`` then keeps a seeded subset drawn across strategies in proportion to
their planned steps (every strategy with sites gets one when the budget allows, so neither a strategy
with 400 sites nor a low catalogue number crowds the others out).

``attempt`` applies one planned step through ``apply_strategy`` and turns every way it can go wrong into
a ``StepFailure`` with a stage and a kind: a refusal, bad parameters, an invalid result, an ungrounded
trace, or an unexpected exception (a bug in the strategy, summarised with its traceback) — generation
records it and carries on.
"""

from __future__ import annotations

import itertools
import random
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from leir.ast import Program
from leir.errors import LeirError
from strategies.base import (
    AppliedStep,
    InvalidParamsError,
    NotApplicableError,
    ParamValue,
    Site,
    Strategy,
    StrategyError,
    TraceGroundingError,
)
from strategies.engine import apply_strategy, strategy_sites

#: Frames of a strategy's traceback kept on a failure record (the innermost ones say where it broke).
TRACEBACK_FRAMES = 6


@dataclass(frozen=True)
class PlannedStep:
    """A step to try: the strategy, the index of the site among its candidates, the site, the params."""

    strategy: Strategy
    site_index: int
    site: Site
    params: dict[str, ParamValue]


@dataclass(frozen=True)
class StepFailure:
    """Why a planned step produced no program (``stage``/``kind`` as the record's ``failure``)."""

    stage: str
    kind: str
    reason: str
    traceback: str = ""

    def to_json(self) -> dict[str, Any]:
        data = {"stage": self.stage, "kind": self.kind, "reason": self.reason or self.kind}
        if self.traceback:
            data["traceback"] = self.traceback
        return data


@dataclass(frozen=True)
class CandidatesFailure:
    """A strategy whose ``candidates`` raised on a state (a bug: it must never raise on a valid one)."""

    strategy: Strategy
    failure: StepFailure


@dataclass
class StatePlan:
    """Everything planned for one state, in a stable order."""

    steps: list[PlannedStep] = field(default_factory=list)
    broken: list[CandidatesFailure] = field(default_factory=list)


def traceback_summary(exc: BaseException, frames: int = TRACEBACK_FRAMES) -> str:
    """The innermost ``frames`` frames and the exception line: enough to find the bug, short on a record."""
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-frames)
    return "".join(lines).strip()[-3000:]


def _rng(*parts: object) -> random.Random:
    return random.Random("|".join(str(p) for p in parts))


def param_choices(site: Site, per_site: int, rng: random.Random) -> list[dict[str, ParamValue]]:
    """Every combination of the site's parameter values when few enough, else ``per_site`` drawn ones."""
    specs = site.params
    if not specs:
        return [{}]
    sizes = [len(spec.values) for spec in specs]
    total = 1
    for size in sizes:
        total *= size
    if total <= per_site:
        return [dict(zip([s.name for s in specs], combo, strict=True))
                for combo in itertools.product(*(spec.values for spec in specs))]
    chosen = sorted(rng.sample(range(total), per_site))
    result = []
    for flat in chosen:
        values: dict[str, ParamValue] = {}
        for spec, size in zip(reversed(specs), reversed(sizes), strict=True):
            flat, digit = divmod(flat, size)
            values[spec.name] = spec.values[digit]
        result.append({spec.name: values[spec.name] for spec in specs})
    return result


def _balanced(steps: list[PlannedStep], limit: int, rng: random.Random) -> list[PlannedStep]:
    """``limit`` steps drawn across strategies in proportion to their planned steps, in plan order.

    When ``limit`` covers every strategy, each gets one step and the rest of the budget is shared in
    proportion to how many steps each planned beyond its first (largest remainders, ties broken by the
    seeded RNG); otherwise ``limit`` strategies are drawn by the RNG (seeded by the state, so different
    states draw different strategies) and each gives one step. Within a strategy the steps are a seeded
    sample, so no strategy is favoured by its catalogue number.
    """
    by_strategy: dict[str, list[int]] = {}
    for index, step in enumerate(steps):
        by_strategy.setdefault(step.strategy.name, []).append(index)
    names = sorted(by_strategy, key=lambda n: steps[by_strategy[n][0]].strategy.number)
    if limit < len(names):
        quota = dict.fromkeys(rng.sample(names, limit), 1)
    else:
        quota = dict.fromkeys(names, 1)
        spare = limit - len(names)
        extra = {n: len(by_strategy[n]) - 1 for n in names}
        total = sum(extra.values())
        if total <= spare:
            quota = {n: len(by_strategy[n]) for n in names}
        elif spare:
            shares = {n: spare * extra[n] / total for n in names}
            for n in names:
                quota[n] += int(shares[n])
            left = limit - sum(quota.values())
            tiebreak = {n: rng.random() for n in names}
            by_remainder = sorted(names, key=lambda n: (-(shares[n] - int(shares[n])), tiebreak[n]))
            for n in by_remainder[:left]:
                quota[n] += 1
    kept: list[int] = []
    for name in names:
        if name in quota:
            kept.extend(rng.sample(by_strategy[name], quota[name]))
    return [steps[i] for i in sorted(kept)]


def plan_steps(program: Program, state_hash: str, strategies: Sequence[Strategy], *, seed: int,
               params_per_site: int = 1, max_steps: int | None = None) -> StatePlan:
    """The steps to try from one (checked) state; a strategy whose ``candidates`` raises is reported."""
    plan = StatePlan()
    for strategy in strategies:
        try:
            sites = strategy_sites(strategy, program)
        except Exception as exc:
            plan.broken.append(CandidatesFailure(strategy, StepFailure(
                "candidates", "exception", f"{type(exc).__name__}: {exc}", traceback_summary(exc))))
            continue
        for index, site in enumerate(sites):
            rng = _rng(seed, state_hash, strategy.name, site.key)
            for params in param_choices(site, params_per_site, rng):
                plan.steps.append(PlannedStep(strategy, index, site, params))
    if max_steps is not None and len(plan.steps) > max_steps:
        plan.steps = _balanced(plan.steps, max_steps, _rng(seed, state_hash, "steps"))
    return plan


def attempt(program: Program, planned: PlannedStep) -> AppliedStep | StepFailure:
    """Apply one planned step; every way it can fail becomes a ``StepFailure`` (never an exception)."""
    try:
        return apply_strategy(program, planned.strategy, planned.site_index, planned.params)
    except TraceGroundingError as exc:
        return StepFailure("grounding", "trace_grounding", exc.reason)
    except NotApplicableError as exc:
        return StepFailure("apply", "refused", exc.reason)
    except InvalidParamsError as exc:
        return StepFailure("apply", "invalid_params", exc.reason)
    except StrategyError as exc:
        return StepFailure("apply", "invalid_result", exc.reason)
    except LeirError as exc:
        return StepFailure("apply", "invalid_result", f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        return StepFailure("apply", "exception", f"{type(exc).__name__}: {exc}", traceback_summary(exc))
