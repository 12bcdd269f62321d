"""Multi-turn conversations from chains of steps: a tuner run or a generated chain as one dialogue.

Why: a single-step row teaches one rewrite; optimising a program is several in a row, each on the
previous one's result. A chain of verified steps — ``steptp generate --depth D`` output, or a
``steptp tune`` run file (both are step records) — becomes ``{"messages": [system, user, assistant,
user, assistant, ...], "meta": {...}}``: the first user turn is the single-step prompt of the chain's
first state (``rendering.prompt_text``), each assistant turn the step's answer (``answer_text``), and
each later user turn says how the previous step verified (and its speedup when known) and asks for one
more step on the program just produced, which the assistant's previous answer already holds.

Which chains: every verified step whose after-state nobody continued (a leaf) ends one conversation,
walked back through the records' parent/child hashes to a state no record produced (the source). A state
reached twice keeps the first record that reached it (file order), so each conversation is one path.
Chains shorter than ``min_turns`` are left out (a one-step chain is already a single-step row).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dataset.benefit import speedup
from dataset.rendering import answer_text, prompt_text, prompt_turns, renderable

TRAJECTORY_FORMAT = "trajectory"


def follow_up_text(record: Mapping[str, Any]) -> str:
    """The user turn after a step: how it verified, then the request for one more step."""
    outcome = ((record.get("verification") or {}).get("outcome")) or "verified"
    value = speedup(record)
    gain = f", speedup {value:.3g}x over its parent" if value is not None else ""
    return (f"The step verified ({outcome}{gain}). Apply exactly one more optimisation strategy to the "
            "transformed program, answering in the same format.")


def chains(records: Sequence[Mapping[str, Any]], *, min_turns: int = 2,
           max_turns: int | None = None) -> list[list[Mapping[str, Any]]]:
    """The source-to-leaf paths of verified steps (see the module docstring), in file order of leaves."""
    usable = [r for r in records if renderable(r)]
    producer: dict[str, Mapping[str, Any]] = {}
    for record in usable:
        producer.setdefault(record["child"]["hash"], record)
    continued = {r["parent"]["hash"] for r in usable}
    out: list[list[Mapping[str, Any]]] = []
    for record in usable:
        if record["child"]["hash"] in continued or producer[record["child"]["hash"]] is not record:
            continue
        path = [record]
        seen = {record["child"]["hash"]}
        while (parent := producer.get(path[0]["parent"]["hash"])) is not None \
                and parent["child"]["hash"] not in seen:
            seen.add(parent["child"]["hash"])
            path.insert(0, parent)
        if max_turns is not None:
            path = path[:max_turns]
        if len(path) >= min_turns:
            out.append(path)
    return out


def render_trajectories(records: Sequence[Mapping[str, Any]], *, min_turns: int = 2,
                        max_turns: int | None = None) -> Iterator[dict[str, Any]]:
    """One multi-turn ``messages`` row (with ``meta``) per chain."""
    for path in chains(records, min_turns=min_turns, max_turns=max_turns):
        messages = prompt_turns(prompt_text(path[0]))
        for index, record in enumerate(path):
            if index:
                messages.append({"role": "user", "content": follow_up_text(path[index - 1])})
            messages.append({"role": "assistant", "content": answer_text(record)})
        gains = [speedup(r) for r in path]
        total = None
        if all(g is not None for g in gains):
            total = 1.0
            for g in gains:
                total *= g or 1.0
        source = path[0].get("source") or {}
        yield {"messages": messages,
               "meta": {"steps": [r["step_id"] for r in path], "strategies": [r["strategy"] for r in path],
                        "workload": source.get("workload") or source.get("id"), "source": source.get("id"),
                        "turns": len(path), "speedup": total}}
