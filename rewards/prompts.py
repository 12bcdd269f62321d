"""Reading a Step-TP prompt back: the program it asks about and the target it names.

A reward is called with the prompt and the completion only (TRL's ``reward_funcs`` contract), so the
parent program is recovered from the prompt ``dataset.rendering.prompt_text`` wrote: the ``Tensors:``
lines give every tensor's name, role, dtype and shape, the line after ``LEIR (canonical):`` the body, the
``Target:`` line the target. The rendering module is the only writer of that text, and
``tests/training/test_rewards.py`` round-trips every prompt of a rendered file through here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from dataset.rendering import ROLE_WORDS
from leir.ast import Program
from leir.program import program_from_json

_ROLES = {words: role for role, words in ROLE_WORDS.items()}
_TENSOR = re.compile(r"^- (?P<name>[^:\s]+): (?P<role>[a-z ]+), .*\((?P<dtype>\w+)\), "
                     r"shape (?P<dims>scalar|[\d x]+) \(")


class PromptError(ValueError):
    """The text is not a Step-TP prompt (no tensors, no LEIR block)."""


def prompt_user_text(prompt: str | Sequence[Mapping[str, Any]]) -> str:
    """The user turn of a conversational prompt (the last one), or the text itself."""
    if isinstance(prompt, str):
        return prompt
    users = [str(turn.get("content") or "") for turn in prompt if turn.get("role") == "user"]
    if not users:
        raise PromptError("the conversation has no user turn")
    return users[-1]


def completion_text(completion: str | Sequence[Mapping[str, Any]]) -> str:
    """The assistant text of a completion (TRL passes conversational completions as message lists)."""
    if isinstance(completion, str):
        return completion
    return "".join(str(turn.get("content") or "") for turn in completion if turn.get("role") == "assistant")


def parse_prompt(prompt: str | Sequence[Mapping[str, Any]]) -> tuple[Program, str]:
    """``(parent program, target family)`` of a Step-TP prompt."""
    lines = prompt_user_text(prompt).split("\n")
    tensors: list[dict[str, Any]] = []
    leir: str | None = None
    target = "llvm"
    for index, line in enumerate(lines):
        match = _TENSOR.match(line)
        if match and leir is None:
            dims = match["dims"]
            shape = [] if dims == "scalar" else [int(n) for n in dims.split(" x ")]
            role = _ROLES.get(match["role"], match["role"])
            tensors.append({"name": match["name"], "role": role, "dtype": match["dtype"], "shape": shape})
        elif line == "LEIR (canonical):" and index + 1 < len(lines):
            leir = lines[index + 1]
        elif line.startswith("Target: GPU"):
            target = "cuda"
    if not tensors or not leir:
        raise PromptError("not a Step-TP prompt: no 'Tensors:' lines or no 'LEIR (canonical):' block")
    return program_from_json({"tensors": tensors, "leir": leir}), target
