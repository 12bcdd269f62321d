"""Checks the streaming strategy tests (#41–#44) share: verify each step, and reject a mutated rewrite."""

from __future__ import annotations

from leir.ast import Program
from leir.parser import parse_body
from leir.printer import canonical
from strategies import AppliedStep, apply_strategy, candidates

from .helpers import assert_interpreter_agrees, assert_verifies, workload


def step_on(workload_id: str, dtype: str, strategy: str, *, after: tuple[str, ...] = ()) -> AppliedStep:
    """``strategy`` at its first site on the workload, after applying ``after`` (first site each)."""
    program = workload(workload_id, dtype)
    for earlier in after:
        program = apply_strategy(program, earlier, 0).after
    assert candidates(program, strategy), f"{strategy} finds no site in {workload_id}"
    return apply_strategy(program, strategy, 0)


def assert_step_verifies(step: AppliedStep) -> None:
    assert_interpreter_agrees(step)
    result = assert_verifies(step)
    # held to the tolerance, and the record says how far it was (a short row may round identically)
    assert result.outcome.value in {"pass", "equal_pass"} and result.max_abs_error is not None


def mutated(step: AppliedStep, old: str, new: str) -> Program:
    """The step's after-state with one fragment of its canonical text replaced (it must occur)."""
    text = canonical(step.after.body)
    assert old in text, f"{old} not in the after-state"
    return Program(step.after.signature, parse_body(text.replace(old, new)))


def assert_rejected(step: AppliedStep, wrong: Program) -> None:
    """The verifier fails the almost-right rewrite against the same parent."""
    from verifier.verify import verify

    result = verify(wrong, parent=step.before, reference="parent", cache=False)
    assert result.outcome.value == "fail", (result.outcome, result.error, result.notes)


def stream_parts(step: AppliedStep):
    """The rescale-factor statement, the weight statement and the running-output update of a #43/#44 step."""
    from leir.ast import Assign, Block

    stream = step.after.body.blocks[step.site.path[0]]
    nested = next(item for item in stream.items if isinstance(item, Block))
    position = stream.items.index(nested)
    factor, weight = stream.items[position - 2], stream.items[position - 1]
    (update,) = nested.items
    assert isinstance(factor, Assign) and isinstance(weight, Assign) and isinstance(update, Assign)
    return factor, weight, update


def assert_docstring_pair_is_real(strategy: str) -> None:
    """The docstring's Before, rewritten at its first site, prints exactly as the docstring's After."""
    import re

    from leir.inference import infer_signature
    from strategies import get_strategy

    doc = type(get_strategy(strategy)).__doc__ or ""
    before = re.search(r"Before: ``(.*?)``", doc)
    after = re.search(r"After:  ``(.*?)``", doc)
    assert before and after, f"{strategy} has no Before/After pair"
    body = parse_body(before.group(1))
    step = apply_strategy(Program(infer_signature(body), body), strategy, 0)
    assert canonical(step.after.body) == after.group(1)
