"""The policy protocol, and the enumeration of engine steps every policy shares."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from dataset.planning import PlannedStep, StepFailure, attempt, param_choices
from leir.ast import Program
from strategies.base import AppliedStep, ParamValue, Site, Strategy
from strategies.engine import strategy_sites
from strategies.registry import all_strategies
from tuner.proposals import Proposal, SearchContext


class Policy(Protocol):
    """Proposes next steps for ``program``; ``name`` identifies it in run records."""

    name: str

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        """Proposals best first (failed ones included, marked by ``failure``)."""
        ...

    def describe(self) -> dict[str, object]:
        """Settings that make the policy reproducible (stored in the run's records)."""
        ...


def engine_steps(program: Program, state_hash: str, *, seed: int, params_per_site: int = 4,
                 strategies: tuple[str, ...] | None = None) -> Iterator[AppliedStep]:
    """Every legal step of every registered strategy (``params_per_site`` seeded parameter choices)."""
    for strategy in all_strategies():
        if strategies is not None and strategy.name not in strategies:
            continue

        def seeded(site: Site, name: str = strategy.name) -> list[dict[str, ParamValue]]:
            rng = random.Random(f"{seed}|{state_hash}|{name}|{site.key}")
            return param_choices(site, params_per_site, rng)

        yield from strategy_steps(strategy, program, seeded)


def strategy_steps(strategy: Strategy, program: Program,
                   params_of: Callable[[Site], Iterable[dict[str, ParamValue]]],
                   keep: Callable[[Site], bool] | None = None) -> Iterator[AppliedStep]:
    """The legal steps of ``strategy`` at the sites of ``program`` that ``keep`` admits, with the
    parameters ``params_of`` names for each site. A strategy that raises proposes nothing (step
    generation reports it; a policy must not die of it)."""
    try:
        sites = strategy_sites(strategy, program)
    except Exception:
        return
    for index, site in enumerate(sites):
        if keep is not None and not keep(site):
            continue
        for params in params_of(site):
            outcome = attempt(program, PlannedStep(strategy, index, site, params))
            if not isinstance(outcome, StepFailure):
                yield outcome
