"""Checks the math-level strategy tests share: an almost-right rewrite, and the verifier rejecting it."""

from __future__ import annotations

from leir.ast import Program
from leir.strategies import AppliedStep


def mutated(step: AppliedStep, old: str, new: str, count: int = 1) -> Program:
    """The step's after-state with ``old`` replaced by ``new`` in its canonical body (an almost-right rewrite)."""
    from leir.parser import parse_body
    from leir.printer import canonical

    text = canonical(step.after.body)
    assert text.count(old) >= count, f"{old!r} is not in the after-state"
    head, sep, tail = text.rpartition(old) if count == -1 else ("", "", "")
    body = head + new + tail if sep else text.replace(old, new, count)
    return Program(step.after.signature, parse_body(body))


def assert_verifier_rejects(program: Program, parent: Program):
    """The verifier builds and runs ``program`` and finds it differs from ``parent``: outcome ``fail``."""
    from verifier.verify import verify

    result = verify(program, parent=parent, reference="parent", cache=False)
    assert result.outcome.value == "fail", (result.outcome, result.error, result.notes)
    return result
