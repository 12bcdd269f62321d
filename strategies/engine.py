"""The one way to apply a strategy: validate, rewrite, check, decide exactness, explain, ground.

Callers (the CLI, the generator, the tuner, the web app) never call ``Strategy.apply`` directly, so every
step anyone records has passed the same gates: the site is one the strategy itself lists, the parameters
are legal values for it, the result passes the checker and differs from the input, and the trace quotes
only what the two states contain.
"""

from __future__ import annotations

from leir.analysis import program_info
from leir.ast import Program
from leir.errors import LeirCheckError
from leir.memo import IdentityMemo
from leir.printer import canonical
from strategies.base import (
    AppliedStep,
    InvalidParamsError,
    InvalidResultError,
    NotApplicableError,
    Params,
    ParamValue,
    Site,
    Strategy,
    TraceGroundingError,
)
from strategies.registry import get_strategy
from strategies.traces import grounding_problems


def candidates(program: Program, strategy: Strategy | str) -> list[Site]:
    """The strategy's legal sites on a valid program (``LeirCheckError`` for an invalid one)."""
    chosen = get_strategy(strategy) if isinstance(strategy, str) else strategy
    info = program_info(program)
    if not info.ok:
        raise LeirCheckError(info.errors)
    return chosen.candidates(program)


#: Candidate lists kept per (program object, strategy): planning lists a state's sites and then applies
#: every one of them, and re-listing them for each application was most of a policy call on a large state.
SITES_KEPT = 512
_SITES: IdentityMemo[Program, list[Site]] = IdentityMemo(SITES_KEPT)


def strategy_sites(strategy: Strategy, program: Program) -> list[Site]:
    """``strategy.candidates(program)``, listed once per program object (``leir.memo``): programs are
    immutable, so the same object always has the same sites, and no structural hash of a large program
    is ever computed. A fresh list is returned each time."""
    kept = _SITES.get(program, strategy.name)
    if kept is None:
        kept = _SITES.put(program, list(strategy.candidates(program)), strategy.name)
    return list(kept)


def _resolve_site(strategy: Strategy, program: Program, site: Site | int) -> Site:
    sites = strategy_sites(strategy, program)
    if isinstance(site, int):
        if not 0 <= site < len(sites):
            raise NotApplicableError(strategy.name, f"site {site} does not exist ({len(sites)} candidate(s))",
                                     "no-such-site")
        return sites[site]
    for known in sites:
        if known.path == site.path and known.detail == site.detail:
            return known
    raise NotApplicableError(strategy.name, f"no legal site at {site.key}", "no-such-site", site)


def _validate_params(strategy: Strategy, site: Site, params: Params | None) -> dict[str, ParamValue]:
    chosen = strategy.default_params(site) if params is None else dict(params)
    specs = {spec.name: spec for spec in site.params}
    unknown = sorted(set(chosen) - set(specs))
    if unknown:
        raise InvalidParamsError(strategy.name, f"unknown parameter(s) {', '.join(unknown)}; "
                                 f"this site takes: {', '.join(specs) or 'none'}", "unknown-param", site)
    for name, spec in specs.items():
        if name not in chosen:
            chosen[name] = spec.values[0]
        value = chosen[name]
        if isinstance(value, list):
            value = chosen[name] = tuple(value)
        if value not in spec.values:
            legal = ", ".join(str(v) for v in spec.values[:20])
            raise InvalidParamsError(strategy.name, f"{name}={value} is not legal here; legal: {legal}",
                                     "illegal-param", site)
    return chosen


def apply_strategy(program: Program, strategy: Strategy | str, site: Site | int,
                   params: Params | None = None) -> AppliedStep:
    """Apply one strategy at one of its candidate sites and return the checked, explained step."""
    chosen = get_strategy(strategy) if isinstance(strategy, str) else strategy
    info = program_info(program)
    if not info.ok:
        raise LeirCheckError(info.errors)
    resolved = _resolve_site(chosen, program, site)
    values = _validate_params(chosen, resolved, params)
    try:
        after = chosen.apply(program, resolved, values)
    except NotApplicableError as refusal:
        refusal.site = refusal.site or resolved
        raise
    after_info = program_info(after)
    if not after_info.ok:
        problems = "; ".join(str(d) for d in after_info.errors[:3])
        raise InvalidResultError(chosen.name, f"produced an invalid program (a bug in the strategy): "
                                 f"{problems}", site=resolved)
    if canonical(after.body) == canonical(program.body) and after.signature == program.signature:
        raise NotApplicableError(chosen.name, f"changes nothing at {resolved.key}", "no-change", resolved)
    exactness = chosen.exactness_at(program, resolved, values)
    trace = chosen.explain(program, resolved, values, after)
    ungrounded = grounding_problems(trace, program, after)
    if ungrounded:
        raise TraceGroundingError(chosen.name, "; ".join(ungrounded), site=resolved)
    return AppliedStep(chosen.name, chosen.number, chosen.level, resolved, values, exactness,
                       program, after, trace)
