"""The trace checker behind ``steptp lint``: no trace states a number or a claim its record contradicts.

Every record with a trace is read back against itself and its file:

* the strategy's part: each claim ``dataset.claims.RULES`` knows (enabling credit, cache fit,
  contiguity, fewer instructions) must hold for the record;
* the ``Effect:`` line (``dataset.effect_reasoning``): every feature change, the modelled time, the
  estimated and measured speedups with their noise, repeats and confidence, the verdict (``faster``,
  ``no gain``, ``slower``) and the named follow-up must equal the record's values at the precision shown;
  what the record has (an estimate, a measurement, a follow-up) must be stated; a number or verdict
  word no check reads is a problem of its own;
* the ``Selection:`` line: the rank, the number of candidates and the named best (or runner-up) with its
  speedup must be those of the file's candidates from the same before state (``partial``, for a filtered
  file or an export split: consistent with the candidates the file still holds);
* across the file: two records share a rationale verbatim only when their before state and strategy
  are the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dataset.benefit import speedup as best_speedup
from dataset.claims import agrees, claim_problems, follow_up
from dataset.effect_reasoning import (
    EDITED_SELECTION,
    EFFECT,
    FEATURE_WORDS,
    ON_ITS_OWN,
    SELECTION,
    STEP_ID_SHOWN,
    VERDICT_WORDS,
    candidates,
    strategy_part,
)

#: Relative slack when a partial file's candidate is compared with a named speedup printed rounded.
PARTIAL_SLACK = 0.005


@dataclass(frozen=True)
class Problem:
    """One contradiction: the record it is in and what is wrong."""

    step_id: str
    message: str

    def __str__(self) -> str:
        return f"{self.step_id[:STEP_ID_SHOWN]}: {self.message}"


_NUM = r"(-?\d+(?:\.\d+)?)"
_WORDS = "|".join(re.escape(w) for w in VERDICT_WORDS.values())
_LABELS = "|".join(words for _, words in FEATURE_WORDS)
_KEYS = {words: key for key, words in FEATURE_WORDS}
_SAID = {words: verdict for verdict, words in VERDICT_WORDS.items()}

#: A check reads one match against the record and appends what it contradicts.
LineCheck = Callable[[re.Match[str], Mapping[str, Any], list[str]], None]


def _effect(record: Mapping[str, Any]) -> Mapping[str, Any]:
    effect = record.get("effect")
    return effect if isinstance(effect, Mapping) else {}


def _part(record: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    part = _effect(record).get(name)
    return part if isinstance(part, Mapping) else None


def _number(text: str, value: Any, what: str, out: list[str]) -> None:
    if not agrees(text, value):
        out.append(f"states {what} {text}, the record has {value}")


def _estimate_or_problem(record: Mapping[str, Any], what: str, out: list[str]) -> Mapping[str, Any] | None:
    estimate = _part(record, "estimate")
    if estimate is None:
        out.append(f"states {what}, but the record has no estimate")
    return estimate


def _feature_change(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    words, before, after = match.groups()
    estimate = _estimate_or_problem(record, words, out)
    if estimate is not None:
        key = _KEYS[words]
        _number(before, estimate["parent"][key], f"{words} before", out)
        _number(after, estimate["child"][key], f"{words} after", out)
        if estimate["parent"][key] == estimate["child"][key]:
            out.append(f"states a change of {words}, but it is {estimate['parent'][key]} before and after")


def _unchanged(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    estimate = _estimate_or_problem(record, "unchanged features", out)
    for item in match.group(1).split(", "):
        found = re.fullmatch(rf"({_LABELS}) {_NUM}", item)
        if found is None:
            out.append(f"cannot read the unchanged feature {item!r}")
            continue
        if estimate is not None:
            key = _KEYS[found.group(1)]
            before, after = estimate["parent"][key], estimate["child"][key]
            _number(found.group(2), before, found.group(1), out)
            if before != after:
                out.append(f"states {found.group(1)} unchanged, but it goes from {before} to {after}")


def _model_time(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    estimate = _estimate_or_problem(record, "a modelled time", out)
    if estimate is not None:
        before, after = estimate["parent"]["model_seconds"] * 1e6, estimate["child"]["model_seconds"] * 1e6
        _number(match.group(1), before, "the modelled time before (µs)", out)
        _number(match.group(2), after, "the modelled time after (µs)", out)


def _estimated(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    estimate = _estimate_or_problem(record, "an estimated speedup", out)
    if estimate is not None:
        _number(match.group(1), estimate["speedup"], "the estimated speedup", out)
        if _SAID[match.group(2)] != estimate["verdict"]:
            out.append(f"calls the estimate {match.group(2)!r}, its verdict is {estimate['verdict']}")


def _measured(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    measured = _part(record, "measured")
    if measured is None:
        out.append("states a measured speedup, but the record has no measurement")
        return
    speedup, repeats, noise, confidence, said = match.groups()
    _number(speedup, measured["speedup"], "the measured speedup", out)
    _number(repeats, measured["repeats"], "the repeats", out)
    _number(noise, measured["noise"] * 100, "the noise (%)", out)
    _number(confidence, measured["confidence"], "the confidence", out)
    if _SAID[said] != measured["verdict"]:
        out.append(f"calls the measurement {said!r}, its verdict is {measured['verdict']}")


def _verdict(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    said, basis, number = match.groups()
    verdict = _effect(record).get("verdict", "unknown")
    if _SAID[said] != verdict:
        out.append(f"states the verdict {said!r}, the record's is {verdict}")
    if basis is not None:
        actual = "measured" if _part(record, "measured") is not None else "estimated"
        if basis != actual:
            out.append(f"calls the verdict's speedup {basis}, it is {actual}")
        _number(number, best_speedup(record), "the verdict's speedup", out)


def _follow_up(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    strategy, prefix, speedup = match.groups()
    found = follow_up(record)
    if found is None:
        out.append(f"names the follow-up {strategy}, but the record credits none")
        return
    if strategy != found["strategy"] or not str(found["step_id"]).startswith(prefix):
        out.append(f"names the follow-up {strategy} ({prefix}), the record's is {found['strategy']} "
                   f"({str(found['step_id'])[:STEP_ID_SHOWN]})")
    _number(speedup, found["speedup"], "the follow-up's speedup", out)


def _own_verdict(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    said = {words: verdict for verdict, words in ON_ITS_OWN.items()}[match.group(1)]
    verdict = _effect(record).get("verdict")
    if said != verdict:
        out.append(f"says {match.group(1)!r}, but the step's verdict is {verdict}")


def _not_credited(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    if follow_up(record) is not None:
        out.append("says no verified faster step follows, but the record credits a follow-up")


def _target(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
    target = _effect(record).get("target")
    if match.group(1) != (target or "its"):
        out.append(f"names the target {match.group(1)}, the record's is {target}")


#: The effect line's claims, each with its check.
EFFECT_CLAIMS: tuple[tuple[re.Pattern[str], LineCheck], ...] = (
    (re.compile(r"The cost model on (\w+)"), _target),
    (re.compile(rf"\b({_LABELS}) {_NUM} → {_NUM}"), _feature_change),
    (re.compile(r"\(unchanged: ([^)]*)\)"), _unchanged),
    (re.compile(rf"modelled time {_NUM} µs → {_NUM} µs"), _model_time),
    (re.compile(rf"an estimated {_NUM}x \(({_WORDS})\)"), _estimated),
    (re.compile(rf"measured {_NUM}x over {_NUM} repeats \(noise {_NUM}%, confidence {_NUM}\): ({_WORDS})\."),
     _measured),
    (re.compile(rf"Verdict: ({_WORDS})(?: \((measured|estimated) {_NUM}x)?"), _verdict),
    (re.compile(rf"the verified faster follow-up (\w+) \(step ([0-9a-f]+)\) at {_NUM}x"), _follow_up),
    (re.compile(rf"({'|'.join(ON_ITS_OWN.values())}), it is credited as enabling"), _own_verdict),
    (re.compile(r"No verified faster step follows from its after-state in this file, so it is not "
                r"credited as enabling"), _not_credited),
)


def _read(line: str, claims: Sequence[tuple[re.Pattern[str], LineCheck]], record: Mapping[str, Any],
          out: list[str]) -> set[str]:
    """Run every claim's check; flag numbers and verdict words no claim read; the claims found."""
    found: set[str] = set()
    rest = line
    for pattern, check in claims:
        for match in pattern.finditer(line):
            check(match, record, out)
            found.add(pattern.pattern)
            rest = rest.replace(match.group(0), " ")
    for number in re.findall(r"\d+(?:\.\d+)?", rest):
        out.append(f"states the number {number}, which no check reads")
    for word in re.findall(rf"\b(?:{_WORDS})\b", rest):
        out.append(f"says {word!r} outside a claim the record decides")
    return found


def effect_problems(line: str, record: Mapping[str, Any]) -> list[str]:
    """What the effect line contradicts in ``record``, or leaves out of what the record holds."""
    out: list[str] = []
    found = _read(line, EFFECT_CLAIMS, record, out)
    patterns = {check: pattern.pattern for pattern, check in EFFECT_CLAIMS}
    required = [(_verdict, "the verdict")]
    if _part(record, "estimate") is not None:
        required.append((_estimated, "the estimated speedup"))
    if _part(record, "measured") is not None:
        required.append((_measured, "the measured speedup"))
    if follow_up(record) is not None:
        required.append((_follow_up, "the credited follow-up"))
    elif _effect(record).get("verdict") != "faster":
        required.append((_not_credited, "that no follow-up is credited"))
    out.extend(f"does not state {what}" for check, what in required if patterns[check] not in found)
    return out


_STATE = r"(the source state|the state (\w+) reached|this state)"
_SELECTION_RANK = re.compile(rf"ranked {_NUM} of {_NUM} (\w+) candidates by speedup from {_STATE}; "
                             rf"(the best|the runner-up), (\w+), "
                             rf"(?:(measured|estimated) {_NUM}x|has no estimate)\.")
_SELECTION_ONLY = re.compile(rf"the only (\w+) candidate from {_STATE}\.")
_SELECTION_FAILED = re.compile(r"not a candidate: the step failed verification\.")
_SELECTION_EDITED = re.compile(re.escape(EDITED_SELECTION[len(SELECTION):]))


def parent_depth(record: Mapping[str, Any]) -> int | None:
    """The before state's depth: stated on the parent, else one less than the step's (an export record's
    parent carries only its hash and program)."""
    depth = record["parent"].get("depth")
    if isinstance(depth, int):
        return depth
    step = record.get("depth")
    return step - 1 if isinstance(step, int) else None


def _state(words: str, origin: str | None, record: Mapping[str, Any], origins: Mapping[str, set[str]],
           out: list[str], partial: bool = False) -> None:
    depth = parent_depth(record)
    reached = origins.get(record["parent"]["hash"], set())
    if (words == "the source state") != (depth == 0):
        out.append(f"calls the before state {words!r}, its depth is {depth}")
    if origin is not None and origin not in reached and not (partial and not reached):
        out.append(f"says {origin} reached the before state, the file's steps to it are {sorted(reached)}")


def _partial_rank(position: str, count: str, role: str, speedup: str | None, record: Mapping[str, Any],
                  ranked: Sequence[Mapping[str, Any]], out: list[str]) -> None:
    """The rank claim against a selection of the state's candidates (a filtered file, an export split):
    the candidates present must fit the stated rank and count, and none may beat the named speedup."""
    above = [r["step_id"] for r in ranked].index(record["step_id"])
    below = len(ranked) - above - 1
    stated, total = int(position), int(count)
    if total < len(ranked):
        out.append(f"states the number of candidates {total}, the file alone has {len(ranked)}")
    if not above + 1 <= stated <= total - below:
        out.append(f"states rank {stated} of {total}, but {above} candidate(s) in the file rank above it "
                   f"and {below} below")
    if speedup is None:
        return
    others = [r for r in ranked if r["step_id"] != record["step_id"]]
    bound = float(speedup) * (1 + PARTIAL_SLACK)
    beating = [r for r in others if (best_speedup(r) or 0.0) > bound]
    if beating:
        out.append(f"names {role} at {speedup}x, but {beating[0]['strategy']} in the file has "
                   f"{best_speedup(beating[0])}x")


def selection_problems(line: str, record: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]],
                       origins: Mapping[str, set[str]] | None = None, *, partial: bool = False) -> list[str]:
    """What the selection line contradicts in the ranking of the record's state's candidates
    (``origins``: per state hash, the strategies of the file's steps that reached it; ``partial``: the
    file is a selection of a generation, so candidates it lacks are not evidence against the line)."""
    out: list[str] = []
    origins = origins or {}

    def rank(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
        position, count, status, words, origin, role, name, basis, speedup = match.groups()
        _state(words, origin, record, origins, out, partial)
        ids = [r["step_id"] for r in ranked]
        if status != record.get("status") and not (partial and status == "unverified"):
            # (a selection may hold steps verified after generation ranked them unverified)
            out.append(f"ranks it among {status} candidates, the step is {record.get('status')}")
        if record["step_id"] not in ids:
            out.append("ranks a step that is not a candidate")
            return
        if partial:
            _partial_rank(position, count, role, speedup, record, ranked, out)
            return
        actual = ids.index(record["step_id"]) + 1
        _number(position, actual, "the rank", out)
        _number(count, len(ranked), "the number of candidates", out)
        if len(ranked) < 2:
            return
        other = ranked[1] if actual == 1 else ranked[0]
        expected_role = "the runner-up" if actual == 1 else "the best"
        if role != expected_role or name != other["strategy"]:
            out.append(f"names {role} {name}, it is {expected_role} {other['strategy']}")
        value = best_speedup(other)
        if (speedup is None) != (value is None):
            out.append(f"states {name}'s speedup as {speedup}, the record has {value}")
        elif speedup is not None:
            _number(speedup, value, f"{name}'s speedup", out)
            actual_basis = "measured" if _part(other, "measured") is not None else "estimated"
            if basis != actual_basis:
                out.append(f"calls {name}'s speedup {basis}, it is {actual_basis}")

    def only(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
        _state(match.group(2), match.group(3), record, origins, out, partial)
        if len(ranked) > 1:
            out.append(f"calls it the only candidate, the state has {len(ranked)}")
        if match.group(1) != record.get("status"):
            out.append(f"calls it a {match.group(1)} candidate, the step is {record.get('status')}")

    def failed(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
        if record.get("status") != "failed":
            out.append(f"says the step failed verification, its status is {record.get('status')}")

    def edited(match: re.Match[str], record: Mapping[str, Any], out: list[str]) -> None:
        origin = (record.get("review") or {}).get("origin")
        if origin != "human":
            out.append(f"says a reviewer edited the step, its origin is {origin or 'the generator'}")

    found = _read(line, ((_SELECTION_RANK, rank), (_SELECTION_ONLY, only), (_SELECTION_FAILED, failed),
                         (_SELECTION_EDITED, edited)), record, out)
    if not found:
        out.append("does not say why this step rather than the state's other candidates")
    return out


def rationale_of(trace: Mapping[str, Any]) -> str:
    """The rationale a trace states: its ``rationale`` part, or in a record that keeps only the rendered
    ``text`` (an export's step records, where a reviewer's edit of the text is what ships) the paragraph
    holding the effect line (else the third of the four)."""
    if "rationale" in trace:
        return str(trace["rationale"])
    paragraphs = str(trace.get("text", "")).split("\n\n")
    for paragraph in paragraphs:
        if any(line.startswith(EFFECT) for line in paragraph.split("\n")):
            return paragraph
    return paragraphs[2] if len(paragraphs) > 2 else ""


def record_problems(record: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]],
                    origins: Mapping[str, set[str]] | None = None, *, partial: bool = False) -> list[str]:
    """Every contradiction between one record's trace and its numbers (``ranked``: its state's
    candidates of its status, best first, as ``dataset.effect_reasoning.candidates`` ranks them;
    ``origins``: per state hash, the strategies of the steps that reached it; ``partial``: see
    ``lint``)."""
    trace = record.get("trace")
    if not isinstance(trace, Mapping):
        return []
    rationale = rationale_of(trace)
    problems = [f"strategy text: {p}" for p in claim_problems(strategy_part(rationale), record)]
    lines = rationale.split("\n")
    effect = [line[len(EFFECT):] for line in lines if line.startswith(EFFECT)]
    selection = [line[len(SELECTION):] for line in lines if line.startswith(SELECTION)]
    if len(effect) != 1:
        problems.append("the rationale does not state the step's effect (one 'Effect:' line)")
    else:
        problems.extend(f"effect: {p}" for p in effect_problems(effect[0], record))
    if len(selection) != 1:
        problems.append("the rationale does not say why this step was selected (one 'Selection:' line)")
    else:
        problems.extend(f"selection: {p}" for p in selection_problems(selection[0], record, ranked, origins,
                                                                      partial=partial))
    return problems


def shared_rationales(records: Iterable[Mapping[str, Any]]) -> list[Problem]:
    """Records whose rationale another record has verbatim with another before state or strategy."""
    first: dict[str, tuple[str, str, str]] = {}
    problems = []
    for record in records:
        trace = record.get("trace")
        if not isinstance(trace, Mapping):
            continue
        key = (record["parent"]["hash"], str(record.get("strategy")))
        seen = first.setdefault(rationale_of(trace), (*key, record["step_id"]))
        if seen[:2] != key:
            problems.append(Problem(record["step_id"], f"shares its rationale verbatim with step "
                                    f"{seen[2][:STEP_ID_SHOWN]} (another before state or strategy)"))
    return problems


def lint(records: Sequence[Mapping[str, Any]], *, partial: bool = False) -> list[Problem]:
    """Every problem of every record of one file, in file order, then the shared rationales.

    ``partial``: the file is a selection of a generation (``steptp filter``'s output, an export split),
    so a state's candidates the file lacks are not evidence against a selection line: the candidates
    present must fit its rank and count, and none may beat the speedup it names.
    """
    groups = candidates(records)
    origins: dict[str, set[str]] = {}
    for record in records:
        if record.get("status") != "failed" and isinstance(record.get("child"), Mapping):
            origins.setdefault(str(record["child"]["hash"]), set()).add(str(record["strategy"]))
    problems: list[Problem] = []
    for record in records:
        ranked = groups.get((record["parent"]["hash"], str(record.get("status"))), [])
        problems.extend(Problem(record["step_id"], p)
                        for p in record_problems(record, ranked, origins, partial=partial))
    return problems + shared_rationales(records)


@dataclass(frozen=True)
class Summary:
    """What ``steptp lint`` reports besides the problems."""

    records: int
    traces: int
    distinct_rationales: int
    no_gain: int
    slower: int

    def line(self, problems: Sequence[Problem]) -> str:
        """The one-line summary ``steptp lint`` prints per file."""
        def share(count: int) -> str:
            return f"{100 * count / self.traces:.1f}%" if self.traces else "-"

        return (f"{self.records} record(s), {self.traces} trace(s), {self.distinct_rationales} distinct "
                f"rationale(s); verdict no gain {self.no_gain} ({share(self.no_gain)}), slower {self.slower} "
                f"({share(self.slower)}); {len(problems)} problem(s) in "
                f"{len({p.step_id for p in problems})} record(s)")


def summarize(records: Sequence[Mapping[str, Any]]) -> Summary:
    """Counts over the traces: how many, how many distinct rationales, how many say no gain or slower."""
    rationales = [rationale_of(r["trace"]) for r in records if isinstance(r.get("trace"), Mapping)]
    return Summary(len(records), len(rationales), len(set(rationales)),
                   sum("Verdict: no gain" in r for r in rationales),
                   sum("Verdict: slower" in r for r in rationales))
