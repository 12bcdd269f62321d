"""Checks the loop-level strategy tests share: a step computes the same thing and claims no false effect."""

from __future__ import annotations

import pytest

from strategies import AppliedStep, NotApplicableError, Site, apply_strategy, candidates

from .helpers import assert_interpreter_agrees, assert_verifies


def check_step(step: AppliedStep, *, honoured: bool = False) -> None:
    """Interpreter and TVM agree with the parent; ``honoured``: the kernel runs every loop as its kind says."""
    assert_interpreter_agrees(step)
    result = assert_verifies(step)
    if honoured:
        assert result.unhonoured_loops == [], (step.strategy, result.unhonoured_loops)


def assert_refused(program, strategy: str, site: Site, match: str = "no legal site") -> None:
    """The site is not a candidate, and applying there is a typed refusal."""
    keys = {(s.path, s.detail) for s in candidates(program, strategy)}
    assert (site.path, site.detail) not in keys
    with pytest.raises(NotApplicableError, match=match):
        apply_strategy(program, strategy, site)


def refusal_reason(program, strategy: str, site: Site, params=None) -> str:
    """What the strategy itself says when asked to apply at an illegal site (bypassing site lookup)."""
    from strategies import get_strategy

    chosen = get_strategy(strategy)
    with pytest.raises(NotApplicableError) as caught:
        chosen.apply(program, site, params or {})
    return caught.value.message
