"""Preference rows from step records: for one state, a better step against a worse one.

Why: SFT teaches the format and a good step; a preference trainer (TRL's ``DPOTrainer``, ms-swift's
``rlhf --rlhf_type dpo``) learns from *contrast*, and step records already carry it — steps from one
state differ in their measured (else estimated) effect, and some attempts failed verification.

* ``chosen``: the state's best verified step (``rendering.ranked``: measured speedup, else estimated).
* ``rejected``, one row per kind the state has (``REJECTED_KINDS``, in that order, at most
  ``pairs_per_state`` rows): ``failed`` — an attempt that produced a program but failed (its
  ``failure`` travels in ``meta``; a failure before any program has no answer to show); ``slower`` — a
  verified step with verdict ``slower`` whose speedup is below the chosen one's; ``neutral`` — a verified
  neutral step below the chosen one. A verified rejected step is only ever strictly worse than the chosen
  one by the same number, so no pair contradicts the ranking; a state without effects pairs only against
  failures (verified beats failed whatever the speed).
* Pairs are made inside one state, and a state belongs to one source workload, so pairs never cross the
  splits an export assigns by workload.

Formats (conversational, as TRL reads them):

* ``preference`` — ``{"prompt": [system, user], "chosen": [assistant], "rejected": [assistant],
  "meta": {...}}``;
* ``unpaired`` — ``{"prompt": [...], "completion": [assistant], "label": bool, "meta": {...}}`` (TRL's
  unpaired preference form, KTO): the chosen steps labelled ``true``, the rejected ones ``false``, each
  step once.

A failed attempt's answer is rendered like a verified one — its trace when it has one, else an empty
``<think>`` — since the point is the program it proposes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dataset.benefit import has_effects, speedup, verdict
from dataset.rendering import (
    IR_KEY,
    STRATEGY_KEY,
    answer_turns,
    prompt_text,
    prompt_turns,
    ranked,
    renderable,
    row_meta,
)

PREFERENCE_FORMATS = ("preference", "unpaired")
REJECTED_KINDS = ("failed", "slower", "neutral")


def attempt_text(record: Mapping[str, Any]) -> str:
    """The answer a record's step gives: its trace (empty without one) and its program and strategy."""
    trace = record.get("trace") or {}
    answer = json.dumps({IR_KEY: record["child"]["program"]["leir"], STRATEGY_KEY: record["strategy"]},
                        ensure_ascii=False)
    return f"<think>{trace.get('text') or ''}</think><answer>{answer}</answer>"


def _failed_attempt(record: Mapping[str, Any]) -> bool:
    return record.get("status") == "failed" and bool(record.get("child"))


def _order(seed: int, record: Mapping[str, Any]) -> str:
    return hashlib.sha256(f"{seed}|{record['step_id']}".encode()).hexdigest()


def _rejected(group: Sequence[Mapping[str, Any]], chosen: Mapping[str, Any],
              seed: int) -> list[tuple[str, Mapping[str, Any]]]:
    """One rejected record per kind the state offers (``REJECTED_KINDS`` order)."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    failed = sorted((r for r in group if _failed_attempt(r)), key=lambda r: _order(seed, r))
    if failed:
        out.append(("failed", failed[0]))
    best = speedup(chosen)
    if best is None:
        return out
    for kind in ("slower", "neutral"):
        worse = [r for r in group if renderable(r) and r is not chosen and verdict(r) == kind
                 and (value := speedup(r)) is not None and value < best]
        if worse:
            # the clearest contrast: the lowest speedup (ties seeded)
            out.append((kind, min(worse, key=lambda r: (speedup(r), _order(seed, r)))))
    return out


def preference_pairs(records: Sequence[Mapping[str, Any]], *, seed: int = 0,
                     pairs_per_state: int = 3) -> list[tuple[Mapping[str, Any], str, Mapping[str, Any]]]:
    """``(chosen, kind, rejected)`` per pair, states in the order they first appear."""
    by_state: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_state.setdefault(record["parent"]["hash"], []).append(record)
    pairs: list[tuple[Mapping[str, Any], str, Mapping[str, Any]]] = []
    for group in by_state.values():
        verified = [r for r in group if renderable(r)]
        if not verified:
            continue
        chosen = ranked(verified, seed)[0] if has_effects(verified) else \
            sorted(verified, key=lambda r: _order(seed, r))[0]
        pairs += [(chosen, kind, rejected) for kind, rejected in _rejected(group, chosen, seed)
                  ][:pairs_per_state]
    return pairs


def pair_meta(chosen: Mapping[str, Any], kind: str, rejected: Mapping[str, Any]) -> dict[str, Any]:
    base = row_meta(chosen)
    failure = rejected.get("failure") or {}
    return {
        "state": base["state"], "workload": base["workload"], "source": base["source"],
        "variant": base["variant"], "target": base["target"],
        "chosen_step_id": chosen["step_id"], "chosen_strategy": chosen["strategy"],
        "chosen_speedup": speedup(chosen),
        "rejected_step_id": rejected["step_id"], "rejected_strategy": rejected["strategy"],
        "rejected_kind": kind, "rejected_speedup": speedup(rejected),
        "rejected_failure": (f"{failure.get('kind')}: {failure.get('reason') or ''}"[:500]
                             if failure else None),
    }


def render_preference(records: Sequence[Mapping[str, Any]], fmt: str = "preference", *, seed: int = 0,
                      pairs_per_state: int = 3) -> Iterator[dict[str, Any]]:
    """Preference (or unpaired) rows; see the module docstring."""
    if fmt not in PREFERENCE_FORMATS:
        raise ValueError(f"unknown preference format {fmt!r}; known: {', '.join(PREFERENCE_FORMATS)}")
    pairs = preference_pairs(records, seed=seed, pairs_per_state=pairs_per_state)
    prompts: dict[str, str] = {}

    def prompt_of(record: Mapping[str, Any]) -> list[dict[str, str]]:
        key = record["parent"]["hash"]
        if key not in prompts:
            prompts[key] = prompt_text(record)
        return prompt_turns(prompts[key])

    if fmt == "preference":
        for chosen, kind, rejected in pairs:
            yield {"prompt": prompt_of(chosen), "chosen": answer_turns(attempt_text(chosen)),
                   "rejected": answer_turns(attempt_text(rejected)),
                   "meta": pair_meta(chosen, kind, rejected)}
        return
    seen: set[str] = set()
    for chosen, kind, rejected in pairs:
        for record, label, why in ((chosen, True, "chosen"), (rejected, False, kind)):
            if record["step_id"] in seen:
                continue
            seen.add(record["step_id"])
            meta = {**row_meta(record), "label_reason": why}
            yield {"prompt": prompt_of(chosen), "completion": answer_turns(attempt_text(record)),
                   "label": label, "meta": meta}
