"""Parsing a model's answer into an engine step, robustly: every way it can be wrong is a named failure.

The answer format is the SFT one (``dataset.rendering``): ``<think>..</think><answer>{JSON}
</answer>`` with the keys ``transformed_IR`` and ``applied_strategy``. A model's IR is never trusted as
is: it must parse and check against the state's signature, and it must be what one legal step of the
named strategy produces (found by applying that strategy's candidates through the engine) — so every
accepted proposal carries the engine's grounded trace and exactness, like a generated step.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from dataset.rendering import IR_KEY, STRATEGY_KEY
from leir.ast import Program
from leir.errors import LeirError
from leir.printer import canonical
from leir.program import program_from_json, program_hash, program_to_json
from strategies.base import AppliedStep
from strategies.registry import UnknownStrategyError, get_strategy
from tuner.policies.base import engine_steps

#: Parameter combinations tried per site when matching a model's IR to a legal step.
MATCH_PARAMS_PER_SITE = 64
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)


@dataclass(frozen=True)
class AnswerFailure:
    kind: str
    reason: str


def answer_objects(text: str, *, truncated: bool = False) -> list[dict[str, Any]] | AnswerFailure:
    """The JSON object(s) inside ``<answer>``; lenient about fences and trailing prose, strict on keys."""
    opened = _ANSWER_OPEN.search(text or "")
    if opened is None:
        return AnswerFailure("off_format", "no <answer> tag in the response")
    rest = text[opened.end():]
    closed = _ANSWER_CLOSE.search(rest)
    if closed is None:
        why = "the response stopped at the token limit" if truncated else "no closing </answer> tag"
        return AnswerFailure("truncated", f"the answer is not closed: {why}")
    body = rest[:closed.start()].strip()
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", body)
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0:
        return AnswerFailure("malformed", "no JSON object inside <answer>")
    try:
        value, _end = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError as exc:
        return AnswerFailure("malformed", f"the answer is not valid JSON: {exc}")
    items = value if isinstance(value, list) else [value]
    objects = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get(IR_KEY), str) \
                or not isinstance(item.get(STRATEGY_KEY), str):
            return AnswerFailure("malformed",
                                 f"each answer needs string keys {IR_KEY!r} and {STRATEGY_KEY!r}")
        objects.append(item)
    return objects


def match_step(program: Program, strategy: str, ir: str) -> AppliedStep | AnswerFailure:
    """The legal step of ``strategy`` on ``program`` whose result is the model's ``ir``."""
    try:
        get_strategy(strategy)
    except UnknownStrategyError as exc:
        return AnswerFailure("unknown_strategy", str(exc))
    try:
        proposed = program_from_json({"tensors": program_to_json(program)["tensors"], "leir": ir})
    except (LeirError, ValueError, KeyError) as exc:
        return AnswerFailure("invalid_ir", f"{type(exc).__name__}: {exc}"[:500])
    if canonical(proposed.body) == canonical(program.body):
        return AnswerFailure("no_change", "the transformed IR is the input program")
    wanted = program_hash(proposed)
    for step in engine_steps(program, program_hash(program), seed=0, params_per_site=MATCH_PARAMS_PER_SITE,
                             strategies=(strategy,)):
        if program_hash(step.after) == wanted:
            return step
    return AnswerFailure("not_a_legal_step",
                         f"no legal {strategy} step on this state produces the proposed IR")
