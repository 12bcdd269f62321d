"""Supervised fine-tuning rows from step records.

The prompt gives what a model needs and nothing it must guess: the program's name, every tensor with its
role, dtype and shape in words, the canonical LEIR, the strategies it may choose from, the instruction,
and the exact JSON keys the answer must use. The answer is
``<think>TRACE</think><answer>{"transformed_IR": ..., "applied_strategy": ...}</answer>`` — the same key
spelling the prompt asks for (the public data asked for ``applied_strategies`` and answered
``applied_strategy``; here ``ANSWER_KEYS`` is the one source of both).

Formats (one JSON object per line):

* ``messages`` — ``{"messages": [{"role", "content"}, ...]}``: a system, a user and an assistant turn,
  nothing else in a turn or a row — the conversational format TRL's ``SFTTrainer`` and ms-swift read as is;
* ``prompt-completion`` — ``{"prompt": TEXT, "completion": TEXT}`` (TRL's standard prompt-completion).

The multi-answer form (``multi_answer=k``) makes one row per state with at least two verified steps:
the prompt asks for ``k`` alternative single steps, the answer reasons about each in turn and gives a
JSON list of ``k`` objects with the same keys. Alternatives are chosen deterministically, distinct
strategies first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from leir.dtypes import numel
from strategies.registry import all_strategies

FORMATS = ("messages", "prompt-completion")
IR_KEY = "transformed_IR"
STRATEGY_KEY = "applied_strategy"
ANSWER_KEYS = (IR_KEY, STRATEGY_KEY)
SYSTEM = ("You are an expert in tensor program optimisation. Programs are written in LEIR, a compact "
          "loop/equation IR. You improve a program by one atomic, semantics-preserving strategy at a time.")
_ROLE_WORDS = {"input": "input", "output": "output", "param": "parameter", "const": "constant",
               "inter": "intermediate"}
_DTYPE_WORDS = {"f16": "16-bit float", "bf16": "bfloat16", "f32": "32-bit float", "f64": "64-bit float",
                "i8": "8-bit integer", "i16": "16-bit integer", "i32": "32-bit integer",
                "i64": "64-bit integer", "u8": "8-bit unsigned integer", "bool": "boolean"}


def program_name(record: Mapping[str, Any]) -> str:
    source = record["source"]
    name: str = (source.get("workload") or source["id"]).rsplit("/", 1)[-1]
    return name


def tensor_lines(tensors: Sequence[Mapping[str, Any]]) -> list[str]:
    """``- A: input, 32-bit float (f32), shape 16 x 1024 (16384 elements)`` per tensor."""
    lines = []
    for t in tensors:
        shape = list(t["shape"])
        count = numel(shape)
        dims = " x ".join(str(n) for n in shape) if shape else "scalar"
        dtype = t["dtype"]
        lines.append(f"- {t['name']}: {_ROLE_WORDS.get(t['role'], t['role'])}, "
                     f"{_DTYPE_WORDS.get(dtype, dtype)} ({dtype}), shape {dims} ({count} element"
                     f"{'s' if count != 1 else ''})")
    return lines


def _strategy_names() -> str:
    return ", ".join(s.name for s in all_strategies())


def prompt_text(record: Mapping[str, Any], alternatives: int = 1) -> str:
    parent = record["parent"]["program"]
    keys = " and ".join(f'"{k}"' for k in ANSWER_KEYS)
    if alternatives == 1:
        task = "Apply exactly one optimisation strategy to this program."
        shape = (f"then inside <answer></answer> one JSON object with exactly the keys {keys}: "
                 f'"{IR_KEY}" is the whole transformed LEIR body in canonical form, "{STRATEGY_KEY}" is the '
                 "name of the strategy you applied.")
    else:
        task = f"Propose {alternatives} different single-step optimisations of this program."
        shape = (f"then inside <answer></answer> a JSON list of {alternatives} objects, each with exactly "
                 f'the keys {keys}: "{IR_KEY}" is the whole transformed LEIR body of that alternative in '
                 f'canonical form, "{STRATEGY_KEY}" is the name of the strategy it applies.')
    return "\n".join([
        f"Program: {program_name(record)}",
        "",
        "Tensors:",
        *tensor_lines(parent["tensors"]),
        "",
        "LEIR (canonical):",
        parent["leir"],
        "",
        f"Strategies: {_strategy_names()}.",
        "",
        task,
        "Reason step by step inside <think></think>, " + shape,
    ])


def _answer_object(record: Mapping[str, Any]) -> dict[str, str]:
    return {IR_KEY: record["child"]["program"]["leir"], STRATEGY_KEY: record["strategy"]}


#: ``json.dumps(..., ensure_ascii=False)`` without building an encoder per call (the same text).
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def answer_text(record: Mapping[str, Any]) -> str:
    answer = _ENCODER.encode(_answer_object(record))
    return f"<think>{record['trace']['text']}</think><answer>{answer}</answer>"


def multi_answer_text(records: Sequence[Mapping[str, Any]]) -> str:
    thoughts = "\n\n".join(f"Alternative {i} ({r['strategy']}):\n{r['trace']['text']}"
                           for i, r in enumerate(records, 1))
    answer = json.dumps([_answer_object(r) for r in records], ensure_ascii=False)
    return f"<think>{thoughts}</think><answer>{answer}</answer>"


def row(prompt: str, answer: str, fmt: str) -> dict[str, Any]:
    if fmt == "messages":
        return {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt},
                             {"role": "assistant", "content": answer}]}
    if fmt == "prompt-completion":
        return {"prompt": f"{SYSTEM}\n\n{prompt}", "completion": answer}
    raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")


def renderable(record: Mapping[str, Any]) -> bool:
    """Only verified steps with a child and a trace become training rows."""
    return record.get("status") == "verified" and bool(record.get("child")) and bool(record.get("trace"))


def _order(record: Mapping[str, Any], seed: int) -> str:
    return hashlib.sha256(f"{seed}|{record['step_id']}".encode()).hexdigest()


def choose_alternatives(records: Sequence[Mapping[str, Any]], k: int,
                        seed: int = 0) -> list[Mapping[str, Any]]:
    """Up to ``k`` steps of one state: one per strategy first (seeded order), then the rest."""
    ordered = sorted(records, key=lambda r: _order(r, seed))
    first: list[Mapping[str, Any]] = []
    rest: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    for record in ordered:
        (rest if record["strategy"] in seen else first).append(record)
        seen.add(record["strategy"])
    return (first + rest)[:k]


def render_texts(records: Sequence[Mapping[str, Any]], *, multi_answer: int = 1,
                 seed: int = 0) -> Iterator[tuple[str, str]]:
    """The (prompt, answer) texts of the rows ``render`` makes, in the same order.

    One prompt is built per distinct (program name, parent program object): steps from one state share
    their prompt, and an export renders tens of thousands of steps from a few hundred states. Keyed by
    the program object itself (kept alive in the memo), so equal hashes of unequal programs never mix.
    """
    usable = [r for r in records if renderable(r)]
    if multi_answer <= 1:
        prompts: dict[tuple[str, int], tuple[Mapping[str, Any], str]] = {}
        for record in usable:
            program = record["parent"]["program"]
            key = (program_name(record), id(program))
            if key not in prompts:
                prompts[key] = (program, prompt_text(record))
            yield prompts[key][1], answer_text(record)
        return
    by_state: dict[str, list[Mapping[str, Any]]] = {}
    for record in usable:
        by_state.setdefault(record["parent"]["hash"], []).append(record)
    for group in by_state.values():
        chosen = choose_alternatives(group, multi_answer, seed)
        if len(chosen) < 2:
            continue
        yield prompt_text(chosen[0], len(chosen)), multi_answer_text(chosen)


def render(records: Sequence[Mapping[str, Any]], fmt: str, *, multi_answer: int = 1,
           seed: int = 0) -> Iterator[dict[str, Any]]:
    """SFT rows: one per verified step, or (``multi_answer`` >= 2) one per state with >= 2 steps."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    for prompt, answer in render_texts(records, multi_answer=multi_answer, seed=seed):
        yield row(prompt, answer, fmt)
