"""The rationale's effect and selection lines, written from the record's numbers.

A strategy writes its rationale from the before state (what the change should buy); only the record
knows what it did buy. Once every step of a file has its ``effect`` and ``follow_up``
(``dataset.generation.link_output_follow_ups``), ``write_reasoning`` rewrites each trace's rationale as
three parts, one per line::

    <the strategy's rationale, claims checked (dataset.claims)>
    Effect: <the cost model's changes, the measured speedup, the verdict, the credited follow-up>
    Selection: <this step's rank among the state's other candidates, by their effects>

The verdict is said as it is — ``faster``, ``no gain`` or ``slower`` — and a step with no gain of its
own is credited as enabling only by naming a verified, faster follow-up the file holds. Every number
is written with ``dataset.claims.shown`` so ``dataset.trace_lint`` can read it back. Rewriting is
idempotent: the strategy's part is what precedes the ``Effect:`` line, and checking it twice changes
nothing, so a resumed generation rewrites the lines from the current effects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dataset.benefit import speedup as best_speedup
from dataset.claims import checked_text, shown
from strategies.traces import Trace

EFFECT = "Effect: "
SELECTION = "Selection: "
#: Features the effect line names, in order, with the words it uses.
FEATURE_WORDS = (("bytes_moved", "bytes moved"), ("work", "work"), ("innermost_stride", "innermost stride"),
                 ("parallel_width", "parallel width"), ("vector_width", "vector width"),
                 ("reuse_per_element", "reuse per element"))
#: How a verdict is said.
VERDICT_WORDS = {"faster": "faster", "neutral": "no gain", "slower": "slower", "unknown": "unknown"}
#: How a credited enabling step's own verdict is said before its follow-up is named.
ON_ITS_OWN = {"neutral": "With no gain of its own", "slower": "Slower on its own",
              "unknown": "With no known gain of its own"}
#: How many characters of a follow-up's step id the effect line names.
STEP_ID_SHOWN = 12


def strategy_part(rationale: str) -> str:
    """The strategy's own rationale: what precedes the effect line (the whole text before reasoning)."""
    if rationale.startswith(EFFECT):
        return ""
    return rationale.split("\n" + EFFECT, 1)[0]


def _change(before: float, after: float) -> str:
    """``before → after`` with as many digits (3 to 6) as it takes for a change to show as one."""
    for digits in range(3, 7):
        if shown(before, digits) != shown(after, digits):
            break
    return f"{shown(before, digits)} → {shown(after, digits)}"


def _estimate_sentence(estimate: Mapping[str, Any], target: str | None) -> str:
    parent, child = estimate["parent"], estimate["child"]
    changed = [f"{words} {_change(parent[key], child[key])}"
               for key, words in FEATURE_WORDS if parent[key] != child[key]]
    same = [f"{words} {shown(parent[key])}" for key, words in FEATURE_WORDS if parent[key] == child[key]]
    text = f"The cost model on {target or 'its target'} gives "
    text += "; ".join(changed) if changed else "no change in any feature"
    if same:
        text += f" (unchanged: {', '.join(same)})"
    return (text + f"; modelled time {shown(parent['model_seconds'] * 1e6)} µs → "
            f"{shown(child['model_seconds'] * 1e6)} µs, an estimated {shown(estimate['speedup'])}x "
            f"({VERDICT_WORDS[estimate['verdict']]}).")


def _measured_sentence(measured: Mapping[str, Any]) -> str:
    return (f"Timed against its parent it measured {shown(measured['speedup'])}x over {measured['repeats']} "
            f"repeats (noise {shown(measured['noise'] * 100)}%, confidence {shown(measured['confidence'])}): "
            f"{VERDICT_WORDS[measured['verdict']]}.")


def _verdict_sentence(effect: Mapping[str, Any], speedup: float | None) -> str:
    verdict = effect.get("verdict", "unknown")
    if verdict == "unknown" or speedup is None:
        return "Verdict: unknown, neither estimated nor measured."
    basis = "measured" if effect.get("measured") else "estimated"
    if verdict == "neutral":
        band = "the measured noise band" if basis == "measured" else "the estimate's neutral band"
        return f"Verdict: no gain ({basis} {shown(speedup)}x, within {band})."
    return f"Verdict: {VERDICT_WORDS[verdict]} ({basis} {shown(speedup)}x)."


def _follow_up_sentence(effect: Mapping[str, Any]) -> str:
    follow = effect.get("follow_up")
    gains = effect.get("verdict") == "faster"
    if isinstance(follow, Mapping):
        own = ON_ITS_OWN.get(str(effect.get("verdict")), ON_ITS_OWN["unknown"])
        lead = "It also enables" if gains else f"{own}, it is credited as enabling:"
        return (f"{lead} the verified faster follow-up {follow['strategy']} (step "
                f"{str(follow['step_id'])[:STEP_ID_SHOWN]}) at {shown(follow['speedup'])}x.")
    if gains:
        return ""
    return ("No verified faster step follows from its after-state in this file, so it is not credited as "
            "enabling.")


def effect_line(record: Mapping[str, Any]) -> str:
    """``Effect: …``: the estimate's changes, the measurement, the verdict and the follow-up, in numbers."""
    effect = record.get("effect") or {}
    parts = []
    if isinstance(effect.get("estimate"), Mapping):
        parts.append(_estimate_sentence(effect["estimate"], effect.get("target")))
    if isinstance(effect.get("measured"), Mapping):
        parts.append(_measured_sentence(effect["measured"]))
    parts.append(_verdict_sentence(effect, best_speedup(record)))
    parts.append(_follow_up_sentence(effect))
    return EFFECT + " ".join(p for p in parts if p)


def candidates(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """The ranked candidates of every (before state, status): steps that did not fail, best first."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("status") != "failed" and record.get("child"):
            groups.setdefault((record["parent"]["hash"], record["status"]), []).append(record)
    for group in groups.values():
        group.sort(key=rank_key)
    return groups


def rank_key(record: Mapping[str, Any]) -> tuple[int, float, str]:
    """Highest speedup first (measured where timed), steps without one last, ties by step id."""
    speedup = best_speedup(record)
    return (speedup is None, -(speedup or 0.0), str(record["step_id"]))


def _described(record: Mapping[str, Any]) -> str:
    speedup = best_speedup(record)
    if speedup is None:
        return f"{record['strategy']}, has no estimate"
    basis = "measured" if (record.get("effect") or {}).get("measured") else "estimated"
    return f"{record['strategy']}, {basis} {shown(speedup)}x"


def origins(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Per state hash, the strategy of the first step in the file that produced it."""
    found: dict[str, str] = {}
    for record in records:
        child = record.get("child")
        if record.get("status") != "failed" and isinstance(child, Mapping):
            found.setdefault(str(child["hash"]), str(record["strategy"]))
    return found


def state_words(record: Mapping[str, Any], origin: str | None) -> str:
    """Which state the candidates share: the source, or the one a named step reached."""
    if record["parent"].get("depth") == 0:
        return "the source state"
    return f"the state {origin} reached" if origin else "this state"


def selection_line(record: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]],
                   origin: str | None = None) -> str:
    """``Selection: …``: why this step rather than the state's other candidates of its status
    (``origin``: the strategy of the step that reached the before state, when the file has it)."""
    if record.get("status") == "failed":
        return SELECTION + "not a candidate: the step failed verification."
    status = record["status"]
    where = state_words(record, origin)
    ids = [r["step_id"] for r in ranked]
    if record["step_id"] not in ids or len(ranked) == 1:
        return SELECTION + f"the only {status} candidate from {where}."
    rank = ids.index(record["step_id"]) + 1
    other, role = (ranked[1], "the runner-up") if rank == 1 else (ranked[0], "the best")
    return (SELECTION + f"ranked {rank} of {len(ranked)} {status} candidates by speedup from {where}; "
            f"{role}, {_described(other)}.")


def reasoned_rationale(record: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]],
                       origin: str | None = None) -> str:
    """The record's rationale: the strategy's checked part, then the effect and selection lines."""
    own = checked_text(strategy_part(record["trace"]["rationale"]), record)
    return "\n".join(p for p in (own, effect_line(record), selection_line(record, ranked, origin)) if p)


#: The selection line of a step whose after-state a reviewer replaced: its old rank no longer holds.
EDITED_SELECTION = (SELECTION + "edited by a reviewer after generation, so not ranked against the state's "
                    "other candidates.")


def with_edited_reasoning(text: str, record: Mapping[str, Any]) -> str:
    """``text`` (a rationale or a whole trace) with its effect and selection lines rewritten for a step
    whose after-state a reviewer replaced: the effect says what ``record`` now holds (usually nothing
    measured), the selection that the generated ranking no longer applies. Other lines stay as written."""
    lines = text.split("\n")
    kept = [line for line in lines if not line.startswith((EFFECT, SELECTION))]
    new = [effect_line(record), EDITED_SELECTION]
    if len(kept) == len(lines):  # no reasoning lines yet: append them to the rationale's paragraph
        return text.rstrip("\n") + "\n" + "\n".join(new)
    at = next(i for i, line in enumerate(lines) if line.startswith((EFFECT, SELECTION)))
    before = [line for line in lines[:at] if not line.startswith((EFFECT, SELECTION))]
    after = [line for line in lines[at:] if not line.startswith((EFFECT, SELECTION))]
    return "\n".join(before + new + after)


def write_reasoning(records: list[dict[str, Any]]) -> int:
    """Rewrite every trace's rationale (and text) from the records' effects; how many changed."""
    groups = candidates(records)
    reached = origins(records)
    changed = 0
    for record in records:
        trace = record.get("trace")
        if not isinstance(trace, dict):
            continue
        ranked = groups.get((record["parent"]["hash"], record["status"]), [])
        rationale = reasoned_rationale(record, ranked, reached.get(record["parent"]["hash"]))
        if rationale != trace["rationale"]:
            trace["rationale"] = rationale
            trace["text"] = Trace.from_json(trace).render()
            changed += 1
    return changed
