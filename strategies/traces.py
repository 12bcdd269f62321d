"""Structured, grounded reasoning traces.

A trace has the four parts ``../shared/STRATEGIES.md`` asks for: what in the *before* state makes the
strategy applicable (the site and its precondition), the concrete change (fragments before → after and
the parameters), why it should help on the target or what it enables (with the state's own numbers),
and the exactness claim. Fragments of LEIR are written in backticks inside the parts and are *quoted*:
``before(...)`` and ``after(...)`` record which state each one cites, and ``check_grounding`` fails
when a fragment does not occur verbatim in that state's canonical text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from leir.ast import Program
from leir.printer import canonical

State = Literal["before", "after"]
_TICKS = re.compile(r"`([^`]+)`")


@dataclass(frozen=True, slots=True)
class Quote:
    """A LEIR fragment the trace quotes, and the state it must occur in."""

    state: State
    text: str


@dataclass(frozen=True, slots=True)
class Trace:
    """The four parts (plain text with backticked fragments) and the quotes they contain."""

    applicability: str
    change: str
    rationale: str
    exactness: str
    quotes: tuple[Quote, ...]

    @property
    def parts(self) -> tuple[str, str, str, str]:
        return (self.applicability, self.change, self.rationale, self.exactness)

    def render(self) -> str:
        """The trace as the dataset's text: four short paragraphs, in order."""
        return "\n\n".join(part.strip() for part in self.parts if part.strip())

    def to_json(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "change": self.change,
            "rationale": self.rationale,
            "exactness": self.exactness,
            "quotes": [{"state": q.state, "text": q.text} for q in self.quotes],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Trace:
        return cls(data["applicability"], data["change"], data["rationale"], data["exactness"],
                   tuple(Quote(q["state"], q["text"]) for q in data.get("quotes", ())))


class TraceBuilder:
    """Collects quotes while a strategy writes its parts: ``t.before(frag)`` returns ```frag```."""

    def __init__(self) -> None:
        self._quotes: list[Quote] = []

    def before(self, fragment: str) -> str:
        self._quotes.append(Quote("before", fragment))
        return f"`{fragment}`"

    def after(self, fragment: str) -> str:
        self._quotes.append(Quote("after", fragment))
        return f"`{fragment}`"

    def build(self, applicability: str, change: str, rationale: str, exactness: str) -> Trace:
        unique = tuple(dict.fromkeys(self._quotes))
        return Trace(applicability, change, rationale, exactness, unique)


def grounding_problems(trace: Trace, before: Program, after: Program) -> list[str]:
    """Every way the trace is not grounded: a quote missing from its state, or an unrecorded fragment."""
    texts = {"before": canonical(before.body), "after": canonical(after.body)}
    problems = [f"{q.state} state does not contain `{q.text}`" for q in trace.quotes
                if q.text not in texts[q.state]]
    quoted = {q.text for q in trace.quotes}
    for part in trace.parts:
        for fragment in _TICKS.findall(part):
            if fragment not in quoted:
                problems.append(f"fragment `{fragment}` is not recorded as a quote of either state")
    return problems
