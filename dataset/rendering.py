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
* ``prompt-completion`` — ``{"prompt": [system, user], "completion": [assistant]}``: TRL's
  *conversational* prompt-completion. The prompt and the answer are message lists, so a trainer applies the
  model's chat template (the same turns ``LLMPolicy`` and ``steptp evaluate`` send to a chat endpoint) and
  the prompt's last token never merges with the answer's first (plain text did: ``.<`` became one token).

With ``metadata=True`` every row also carries ``meta`` (``row_meta``): the step id, the state, the
workload, source and shape variant, strategy, level, exactness, target and the effect's verdict and
speedup — one flat object of scalars (one arrow struct) beside the training columns, which trainers ignore
(TRL keeps only the columns it tokenises) and an analysis can group by.

The prompt also says what the answer depends on (``context_lines``): the target the step is built and
timed for (CPU ``llvm`` or GPU ``cuda``), the exactness rule, and a one-line definition of every
registered strategy, generated from the registry — within ``CONTEXT_TOKEN_BUDGET`` Qwen tokens (the
verifier's token counter; ``tests/pipeline/test_rendering.py`` asserts it).

Which steps answer a state: where the state's records carry effects (``dataset.benefit``), the steps are
ranked by the measured speedup over the parent, else the estimated one, and the row answers the
best-ranked step; the multi-answer form (``multi_answer=k``) answers the top ``k`` in rank order. States
whose records carry no effect (older datasets) keep the earlier behaviour: one row per verified step, and
``k`` alternatives chosen deterministically, distinct strategies first. A multi-answer row needs at least
two verified steps; the answer reasons about each in turn and gives a JSON list of objects with the same
keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dataset.benefit import has_effects, speedup
from leir.dtypes import numel
from strategies.registry import all_strategies

FORMATS = ("messages", "prompt-completion")
IR_KEY = "transformed_IR"
STRATEGY_KEY = "applied_strategy"
ANSWER_KEYS = (IR_KEY, STRATEGY_KEY)
SYSTEM = ("You are an expert in tensor program optimisation. Programs are written in LEIR, a compact "
          "loop/equation IR. You improve a program by one atomic, semantics-preserving strategy at a time.")
ROLE_WORDS = {"input": "input", "output": "output", "param": "parameter", "const": "constant",
              "inter": "intermediate"}
_DTYPE_WORDS = {"f16": "16-bit float", "bf16": "bfloat16", "f8e4m3": "8-bit float (e4m3fn)",
                "f8e5m2": "8-bit float (e5m2)", "f32": "32-bit float", "f64": "64-bit float",
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
        lines.append(f"- {t['name']}: {ROLE_WORDS.get(t['role'], t['role'])}, "
                     f"{_DTYPE_WORDS.get(dtype, dtype)} ({dtype}), shape {dims} ({count} element"
                     f"{'s' if count != 1 else ''})")
    return lines


#: Qwen tokens the target, the exactness rule and the strategy definitions may take together.
CONTEXT_TOKEN_BUDGET = 1500
_TARGETS = {
    "llvm": ("Target: CPU (TVM llvm). The step is built, verified and timed there: P loops run on CPU "
             "cores, V loops become vector lanes, B loops over bx/by/bz run in parallel and over tx/ty/tz "
             "serially."),
    "cuda": ("Target: GPU (TVM cuda). The step is built, verified and timed there: B loops bind blockIdx "
             "(bx/by/bz) and threadIdx (tx/ty/tz), s tensors live in shared memory, l tensors in "
             "registers."),
}
EXACTNESS_RULE = ("Exactness: an exact (E) strategy must give outputs bitwise identical to the program's; a "
                  "numerically equivalent (N) one must agree within the dtype's tolerance, also on special "
                  "and large-magnitude inputs (zeros, +-1e6, NaN, +-inf), so a rewrite that overflows "
                  "where the program does not is wrong.")


def target_of(record: Mapping[str, Any]) -> str:
    """``cuda`` when the step was verified for a GPU, else ``llvm`` (the dataset's default target)."""
    verification = record.get("verification") or {}
    result = verification.get("result") if isinstance(verification, Mapping) else None
    target = str((result or {}).get("target") or "llvm")
    return "cuda" if target.startswith("cuda") else "llvm"


def strategy_definitions() -> list[str]:
    """One line per registered strategy: name, exactness (E, N or E/N per site) and its summary."""
    return [f"- {i.name} ({i.exactness}): {i.summary.replace('``', '')}"
            for i in (s.info() for s in all_strategies())]


def context_lines(target: str = "llvm") -> list[str]:
    """What the answer depends on: the target, the exactness rule, the strategies defined."""
    return [_TARGETS[target], EXACTNESS_RULE, "", "Strategies (name, exactness, what it does):",
            *strategy_definitions()]


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
        *context_lines(target_of(record)),
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


def prompt_turns(prompt: str) -> list[dict[str, str]]:
    """The system and user turns that ask ``prompt`` (every format and the reward read these)."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]


def answer_turns(answer: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": answer}]


def row(prompt: str, answer: str, fmt: str) -> dict[str, Any]:
    if fmt == "messages":
        return {"messages": prompt_turns(prompt) + answer_turns(answer)}
    if fmt == "prompt-completion":
        return {"prompt": prompt_turns(prompt), "completion": answer_turns(answer)}
    raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")


#: The keys of a row's ``meta`` (every value a string, a number or null, so arrow infers one struct).
META_KEYS = ("step_id", "state", "workload", "source", "variant", "strategy", "level", "exactness", "target",
             "verdict", "speedup", "measured")


def row_meta(record: Mapping[str, Any]) -> dict[str, Any]:
    """What a row answers, for selection and analysis (never for training): see ``META_KEYS``."""
    source = record.get("source") or {}
    block = record.get("effect") if isinstance(record.get("effect"), Mapping) else {}
    verdict = (block or {}).get("verdict")
    variant = source.get("variant")
    return {
        "step_id": record["step_id"],
        "state": record["parent"].get("hash"),
        "workload": source.get("workload") or source.get("id"),
        "source": source.get("id"),
        "variant": variant if isinstance(variant, int) else None,
        "strategy": record["strategy"],
        "level": record.get("level"),
        "exactness": record.get("exactness"),
        "target": target_of(record),
        "verdict": verdict if isinstance(verdict, str) else "unknown",
        "speedup": speedup(record),
        "measured": bool((block or {}).get("measured")),
    }


def renderable(record: Mapping[str, Any]) -> bool:
    """Only verified steps with a child and a trace become training rows."""
    return record.get("status") == "verified" and bool(record.get("child")) and bool(record.get("trace"))


def _order(record: Mapping[str, Any], seed: int) -> str:
    return hashlib.sha256(f"{seed}|{record['step_id']}".encode()).hexdigest()


def ranked(records: Sequence[Mapping[str, Any]], seed: int = 0) -> list[Mapping[str, Any]]:
    """A state's steps best first: by measured speedup, else estimated; no number last; ties seeded."""
    def key(record: Mapping[str, Any]) -> tuple[int, float, str]:
        value = speedup(record)
        return (0, -value, _order(record, seed)) if value is not None else (1, 0.0, _order(record, seed))

    return sorted(records, key=key)


def choose_alternatives(records: Sequence[Mapping[str, Any]], k: int,
                        seed: int = 0) -> list[Mapping[str, Any]]:
    """Up to ``k`` steps of one state: the top ``k`` by rank when they carry effects; otherwise one per
    strategy first (seeded order), then the rest."""
    if has_effects(records):
        return ranked(records, seed)[:k]
    ordered = sorted(records, key=lambda r: _order(r, seed))
    first: list[Mapping[str, Any]] = []
    rest: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    for record in ordered:
        (rest if record["strategy"] in seen else first).append(record)
        seen.add(record["strategy"])
    return (first + rest)[:k]


def _answered(usable: Sequence[Mapping[str, Any]], seed: int) -> list[Mapping[str, Any]]:
    """The steps single-answer rows answer (input order): a ranked state's best step, every step of a
    state without effects."""
    by_state: dict[str, list[Mapping[str, Any]]] = {}
    for record in usable:
        by_state.setdefault(record["parent"]["hash"], []).append(record)
    best = {id(ranked(group, seed)[0]) for group in by_state.values() if has_effects(group)}
    plain = {id(r) for group in by_state.values() if not has_effects(group) for r in group}
    return [r for r in usable if id(r) in best or id(r) in plain]


def answered_records(records: Sequence[Mapping[str, Any]], seed: int = 0) -> list[Mapping[str, Any]]:
    """The records single-answer ``render_texts`` answers, in its order (one per text it yields)."""
    return _answered([r for r in records if renderable(r)], seed)


def render_texts(records: Sequence[Mapping[str, Any]], *, multi_answer: int = 1,
                 seed: int = 0) -> Iterator[tuple[str, str]]:
    """The (prompt, answer) texts of the rows ``render`` makes, in the same order.

    One prompt is built per distinct (program name, parent program object, target): steps from one state
    share their prompt, and an export renders tens of thousands of steps from a few hundred states. Keyed
    by the program object itself (kept alive in the memo), so equal hashes of unequal programs never mix.
    """
    usable = [r for r in records if renderable(r)]
    if multi_answer <= 1:
        prompts: dict[tuple[str, int, str], tuple[Mapping[str, Any], str]] = {}
        for record in _answered(usable, seed):
            program = record["parent"]["program"]
            key = (program_name(record), id(program), target_of(record))
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
           seed: int = 0, metadata: bool = False) -> Iterator[dict[str, Any]]:
    """SFT rows: one per state answering its best-ranked step (one per verified step where the state has
    no effects), or (``multi_answer`` >= 2) one per state with >= 2 steps, its top ``k``. ``metadata``
    adds ``meta`` (single-answer rows only: a multi-answer row answers several steps)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if metadata and multi_answer > 1:
        raise ValueError("metadata describes one answered step; multi-answer rows answer several")
    texts = render_texts(records, multi_answer=multi_answer, seed=seed)
    if not metadata:
        for prompt, answer in texts:
            yield row(prompt, answer, fmt)
        return
    for (prompt, answer), record in zip(texts, answered_records(records, seed), strict=True):
        yield {**row(prompt, answer, fmt), "meta": row_meta(record)}
