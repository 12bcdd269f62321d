"""Single-step evaluation of a model: how far each answer on an exported split gets.

For every verified step record of a split (``dataset.records``; an export's step file or a
``steptp generate`` output) the model is asked with exactly the SFT prompt of that record
(``rendering.prompt_text``, no search context — what it was trained on), and its answer climbs a ladder:

``answered`` (an ``<answer>`` with the two keys) → ``different`` (the IR parses, checks against the
signature and differs from the input) → ``build`` (TVM compiles it) → ``execute`` (it runs) → ``pass``
(outputs match the parent within the tolerance) → ``equal_pass`` (bitwise equal to the parent).

Each level's rate is the fraction of prompts whose answer reached at least that level; ``legal_step`` is
the fraction whose IR is exactly what one legal step of the named strategy produces, ``same_strategy``
the fraction naming the record's own strategy. Rates are given overall, per strategy and per level
(of the record's strategy), as a table and as JSON. The model's IR is verified as it is, not matched to
an engine step first, because the question is what the model produces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dataset.records import Record
from dataset.rendering import prompt_text, renderable
from leir.analysis import program_info
from leir.ast import Program
from leir.errors import LeirError
from leir.printer import canonical
from leir.program import program_from_json, program_to_json
from tuner.policies.answers import AnswerFailure, answer_objects, match_step
from tuner.policies.llm import LLMPolicy

LADDER = ("answered", "different", "build", "execute", "pass", "equal_pass")
#: The ladder level a verification outcome proves (outcomes that fail earlier prove only ``different``).
_REACHED = {"build_error": "different", "check_error": "different", "runtime_error": "build",
            "crash": "build", "timeout": "build", "memory_limit": "build", "build": "build",
            "execute": "execute", "fail": "execute", "unstable_reference": "execute", "pass": "pass",
            "equal_pass": "equal_pass"}

VerifyFn = Callable[[Program, Program], Mapping[str, Any]]


def grade(parent: Program, content: str | None, truncated: bool, verify: VerifyFn) -> dict[str, Any]:
    """Where one answer gets on the ladder (``level`` is ``None`` when it is not even an answer)."""
    parsed = answer_objects(content or "", truncated=truncated)
    if isinstance(parsed, AnswerFailure):
        return {"level": None, "failure": parsed.kind, "reason": parsed.reason}
    answer = parsed[0]
    graded: dict[str, Any] = {"level": "answered", "strategy": answer["applied_strategy"]}
    tensors = program_to_json(parent)["tensors"]
    try:
        proposed = program_from_json({"tensors": tensors, "leir": answer["transformed_IR"]})
    except (LeirError, ValueError, KeyError) as exc:
        return {**graded, "failure": "invalid_ir", "reason": f"{type(exc).__name__}: {exc}"[:300]}
    if not program_info(proposed).ok:
        return {**graded, "failure": "check_error", "reason": str(program_info(proposed).errors[0])[:300]}
    if canonical(proposed.body) == canonical(parent.body):
        return {**graded, "failure": "no_change", "reason": "the answer is the input program"}
    graded["level"] = "different"
    graded["legal_step"] = not isinstance(match_step(parent, answer["applied_strategy"],
                                                     answer["transformed_IR"]), AnswerFailure)
    result = verify(proposed, parent)
    outcome = str(result.get("outcome"))
    graded["outcome"] = outcome
    graded["level"] = _REACHED.get(outcome, "different")
    return graded


def _rates(items: list[dict[str, Any]]) -> dict[str, Any]:
    count = len(items)
    rates: dict[str, Any] = {"prompts": count}
    for index, level in enumerate(LADDER):
        reached = sum(1 for i in items if i["level"] is not None and LADDER.index(i["level"]) >= index)
        rates[level] = reached / count if count else None
    rates["legal_step"] = sum(1 for i in items if i.get("legal_step")) / count if count else None
    rates["same_strategy"] = (sum(1 for i in items if i.get("strategy") == i["expected_strategy"]) / count
                              if count else None)
    return rates


def evaluate_single(records: Iterable[Record], policy: LLMPolicy, verify: VerifyFn, *,
                    limit: int | None = None,
                    progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Ask ``policy`` (an ``LLMPolicy``) once per verified record; the ladder rates and every item."""
    items: list[dict[str, Any]] = []
    for record in records:
        if not renderable(record):
            continue
        if limit is not None and len(items) >= limit:
            break
        parent = program_from_json(record["parent"]["program"])
        choices, error = policy.complete(prompt_text(record), record["parent"]["hash"])
        if choices is None:
            item = {"level": None, "failure": error.partition(":")[0] if error else "endpoint_error",
                    "reason": error}
        else:
            content, truncated = choices[0]
            item = grade(parent, content, truncated, verify)
        item.update(step_id=record["step_id"], expected_strategy=record["strategy"], level_of=record["level"])
        items.append(item)
        if progress is not None:
            progress(len(items))
    by_strategy = {name: _rates([i for i in items if i["expected_strategy"] == name])
                   for name in sorted({i["expected_strategy"] for i in items})}
    by_level = {name: _rates([i for i in items if i["level_of"] == name])
                for name in sorted({i["level_of"] for i in items})}
    return {"overall": _rates(items), "by_strategy": by_strategy, "by_level": by_level, "items": items}


def rates_table(report: Mapping[str, Any]) -> str:
    """The rates as a fixed-width table: one row overall, per level, per strategy."""
    columns = (*LADDER, "legal_step", "same_strategy")
    lines = [f"{'':28} {'n':>5} " + " ".join(f"{c:>13}" for c in columns)]

    def row(name: str, rates: Mapping[str, Any]) -> str:
        cells = " ".join(f"{(rates[c] or 0.0) * 100:12.1f}%" for c in columns)
        return f"{name:28} {rates['prompts']:5d} {cells}"

    lines.append(row("all", report["overall"]))
    lines.extend(row(f"level {name}", rates) for name, rates in report["by_level"].items())
    lines.extend(row(name, rates) for name, rates in report["by_strategy"].items())
    return "\n".join(lines)
