"""What a policy hands the search: a ranked proposal, either an engine step or a recorded failure.

A proposal that produced a program is always an ``AppliedStep`` from ``apply_strategy`` (so it carries a
grounded trace and an exactness claim); a proposal that did not — an LLM answer that was malformed,
truncated, named an unknown strategy or gave IR no legal step produces — keeps the raw response and the
reason, so a run records every thing a policy said, including what went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from strategies.base import AppliedStep


@dataclass(frozen=True)
class Proposal:
    """One next step suggested by a policy (``step``) or a failed suggestion (``failure``)."""

    strategy: str
    step: AppliedStep | None = None
    score: float = 0.0
    rationale: str = ""
    failure: dict[str, str] | None = None
    raw: str | None = None
    origin: str = "rule"
    #: The policy ranked it by a follow-up step it enables (a layout change that lets a reorder make an
    #: operand contiguous), not by what it saves alone: the search measures that follow-up at once, since
    #: by its own timing the step may be slower and a beam would drop it before the follow-up is tried.
    enables: bool = False
    #: Steps the policy planned after this one, each from the state the previous reaches (the rule
    #: policy's register-tile recipe): the search measures them right after it, in order, since none
    #: but the last pays and a beam would drop the chain part-way.
    then: tuple[AppliedStep, ...] = ()

    @property
    def ok(self) -> bool:
        return self.step is not None

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {"strategy": self.strategy, "origin": self.origin, "score": self.score}
        if self.step is not None:
            data["site"] = self.step.site.key
            data["params"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.step.params.items()}
        if self.failure is not None:
            data["failure"] = dict(self.failure)
        if self.raw is not None:
            data["raw"] = self.raw
        if self.enables:
            data["enables"] = True
        if self.then:
            data["then"] = [f"{step.strategy} at {step.site.key}" for step in self.then]
        return data


@dataclass
class SearchContext:
    """What the search tells a policy besides the state: where it stands and what already failed."""

    speedup: float = 1.0
    #: ``"strategy at site"`` of each step from the source to the state.
    path: list[str] = field(default_factory=list)
    #: ``(strategy at site, why)`` of candidates from this state that did not verify or were malformed.
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: Proposals wanted (a policy may return fewer).
    wanted: int = 8
