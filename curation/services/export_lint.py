"""The lint every export runs on its rows before anyone trains on them.

Each (record, messages-row) is checked: the answer parses as the JSON the prompt promises (the keys
``dataset.rendering.ANSWER_KEYS``), the prompt names those keys, every backticked fragment the
trace quotes occurs in the parent or child LEIR, and the token length (Qwen tokenizer) is reported
against ``max_length``. What many rows share — the prompt of one state, the answer JSON of one child —
is checked once; the result is the same report as checking every row on its own.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

#: Rows tokenised for the mean/max token length an export reports (seeded sample).
TOKEN_SAMPLE = 1000

_ANSWER = re.compile(r"<answer>(.*)</answer>\s*$", re.DOTALL)
_THINK = re.compile(r"^<think>(.*)</think>", re.DOTALL)
_TICKS = re.compile(r"`([^`]+)`")


def _answer_ok(text: str | None) -> bool:
    from dataset.rendering import ANSWER_KEYS

    try:
        parsed = json.loads(text) if text is not None else None
    except json.JSONDecodeError:
        return False
    objects = parsed if isinstance(parsed, list) else [parsed]
    keys = sorted(ANSWER_KEYS)
    return parsed is not None and all(isinstance(o, dict) and sorted(o) == keys for o in objects)


def _quoted(fragment: str, parent: str, child: str) -> bool:
    """Whether ``fragment`` occurs in ``parent + child`` (the joined texts only built when needed)."""
    return fragment in parent or fragment in child or fragment in parent + child


def lint_rows(
    rows: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    *,
    max_length: int,
    count_tokens: Callable[[str, str], int],
) -> dict[str, Any]:
    """The lint report of (record, messages-row) pairs; ``count_tokens(prompt, answer)`` counts the
    tokens of the two joined (``verifier.tokens.PrefixTokenCounter``).

    Tokenising is most of a lint's time, so only the rows that *can* exceed ``max_length`` are
    tokenised for that count — a BPE token covers at least one byte, so a row of at most ``max_length``
    UTF-8 bytes never has more tokens — plus a seeded sample of ``TOKEN_SAMPLE`` rows for the reported
    mean and max (all rows when there are fewer). The over-length count is therefore exact.
    """
    from dataset.rendering import ANSWER_KEYS

    problems: list[str] = []
    lengths: list[int] = []
    over = 0
    rows = list(rows)
    sampled = set(random.Random(0).sample(range(len(rows)), min(len(rows), TOKEN_SAMPLE)))
    prompts: dict[tuple[str, ...], tuple[str, bool, int]] = {}
    answers: dict[str | None, bool] = {}
    for index, (record, row) in enumerate(rows):
        turns = row["messages"]
        answer = turns[-1]["content"]
        before = tuple(turn["content"] for turn in turns[:-1])
        known = prompts.get(before)
        if known is None:
            joined = "".join(before)
            names_keys = all(key in joined for key in ANSWER_KEYS)
            known = prompts[before] = (joined, names_keys, len(joined.encode()))
        prompt, names_keys, prompt_bytes = known
        match = _ANSWER.search(answer)
        body = match.group(1) if match else None
        ok = answers.get(body)
        if ok is None:
            ok = answers[body] = _answer_ok(body)
        if not ok:
            problems.append(f"{record['step_id'][:12]}: answer is not the JSON the prompt promises")
        if not names_keys:
            problems.append(f"{record['step_id'][:12]}: prompt does not name the answer keys")
        think = _THINK.search(answer)
        parent, child = record["parent"]["program"]["leir"], record["child"]["program"]["leir"]
        for fragment in _TICKS.findall(think.group(1) if think else ""):
            if not _quoted(fragment, parent, child):
                problems.append(
                    f"{record['step_id'][:12]}: trace quotes `{fragment[:40]}`, not in either state"
                )
        if index in sampled or prompt_bytes + len(answer.encode()) > max_length:
            tokens = count_tokens(prompt, answer)
            over += tokens > max_length
            if index in sampled:
                lengths.append(tokens)
    return {
        "rows": len(rows),
        "token_sample": len(lengths),
        "problems": problems[:200],
        "problem_count": len(problems),
        "max_length": max_length,
        "over_max_length": over,
        "tokens": {"max": max(lengths, default=0), "mean": (sum(lengths) / len(lengths)) if lengths else 0},
    }
