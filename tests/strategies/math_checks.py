"""Checks the math-level strategy tests share: an almost-right rewrite the verifier rejects, determinism."""

from __future__ import annotations

from leir.ast import Program
from strategies import AppliedStep


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


def assert_same_steps_byte_for_byte(program: Program, strategy: str, steps: int = 3) -> None:
    """Candidates, after-states and traces are the same for an equal program built independently."""
    from leir.program import dump_program, load_program
    from strategies import apply_strategy, candidates

    twin = load_program(dump_program(program))
    first, again = candidates(program, strategy), candidates(twin, strategy)
    assert first and first == again
    for index in range(min(steps, len(first))):
        one, two = apply_strategy(program, strategy, index), apply_strategy(twin, strategy, index)
        assert dump_program(one.after) == dump_program(two.after)
        assert one.trace.render() == two.trace.render()
