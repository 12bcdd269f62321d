"""The claims a strategy's own rationale makes, each checked against the record it is written into.

Strategies write their rationale from the before state alone (``strategies/*``): what the change does
and what it should buy. Some of those sentences claim things only the record can confirm — that the step
*enables* something, that a tile *stays in cache*, that an access is *contiguous*, that the block issues
*N x fewer instructions*. ``RULES`` lists each such claim with the check that decides it from the record;
``checked_text`` keeps what passes (a sentence, or the clause, that fails is dropped) and
``claim_problems`` names what fails, for ``dataset.trace_lint``.

Credit for enabling is never the template's to give: ``an enabling step`` / ``enables`` are reworded to
``meant to enable a later step`` / ``can enable`` always (the same bytes whatever the follow-up), and the
effect paragraph (``dataset.effect_reasoning``) credits a named follow-up only when one exists.

Numbers are written with ``shown`` and read back with ``agrees``: a number in a trace agrees with the
record when the record's value rounds to it at the precision the text shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from leir.analysis import affine_form, tensor_refs_in
from leir.program import program_from_json
from strategies.loop.loop_tiling import TARGET_L1_BYTES

#: The L1 data cache per target family a cache claim is checked against (``loop_tiling``'s figure).
L1_BYTES = {"llvm": TARGET_L1_BYTES}

_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def shown(value: float, digits: int = 3) -> str:
    """A number as a trace writes it: integers whole, others to ``digits`` significant digits (no
    exponent; at least 1000 whole)."""
    if float(value).is_integer() or abs(value) >= 1000:
        return str(round(value))
    digits = max(0, digits - 1 - _magnitude(abs(value)))
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _magnitude(value: float) -> int:
    """The decimal exponent of ``value`` (0 for 1..9.99, -2 for 0.01..0.0999)."""
    if value == 0:
        return 0
    exponent = 0
    while value >= 10:
        value /= 10
        exponent += 1
    while value < 1:
        value *= 10
        exponent -= 1
    return exponent


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def agrees(text: str, value: Any) -> bool:
    """Whether ``value`` rounds to the number ``text`` at the precision ``text`` shows, that precision
    being at least ``shown``'s (``2`` does not stand for 2.4 because 2 is within a unit of it)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not _NUMBER.match(text):
        return False
    decimals = _decimals(text)
    if decimals < _decimals(shown(value)):
        return False
    return abs(float(text) - float(value)) <= 0.5 * 10.0 ** -decimals + 1e-12 * abs(float(value))


def estimate(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    effect = record.get("effect")
    found = effect.get("estimate") if isinstance(effect, Mapping) else None
    return found if isinstance(found, Mapping) else None


def follow_up(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    effect = record.get("effect")
    found = effect.get("follow_up") if isinstance(effect, Mapping) else None
    return found if isinstance(found, Mapping) else None


# --------------------------------------------------------------------------------------------- checks

Check = Callable[[re.Match[str], str, Mapping[str, Any]], str | None]


def _credit(match: re.Match[str], sentence: str, record: Mapping[str, Any]) -> str | None:
    if follow_up(record) is None:
        return f"claims {match.group(0)!r}, but no verified faster follow-up exists in the chain"
    return None


def _target_l1(sentence: str, record: Mapping[str, Any]) -> tuple[str, int] | None:
    """The target the sentence names (``of the llvm target``), else the record's, with its L1 bytes."""
    named = re.search(r"of the (\w+) target", sentence)
    effect = record.get("effect")
    target = named.group(1) if named else effect.get("target") if isinstance(effect, Mapping) else None
    return (target, L1_BYTES[target]) if target in L1_BYTES else None


def _cache(fits: bool) -> Check:
    def check(match: re.Match[str], sentence: str, record: Mapping[str, Any]) -> str | None:
        found = _target_l1(sentence, record)
        if found is None:
            return f"claims {match.group(0)!r} for a target without a known cache size"
        target, l1 = found
        kib = re.search(r"(\d+) KiB L1", sentence)
        if kib is not None and int(kib.group(1)) * 1024 != l1:
            return f"names a {kib.group(1)} KiB L1, but the {target} target's is {l1 // 1024} KiB"
        footprint = re.search(r"about (\d+) bytes", sentence)
        if footprint is None:
            return f"claims {match.group(0)!r} without stating a footprint"
        size = int(footprint.group(1))
        if fits and size > l1:
            return f"claims {match.group(0)!r} for {size} bytes, more than the {l1}-byte L1 of {target}"
        if not fits and size <= l1:
            return f"claims {match.group(0)!r} for {size} bytes, within the {l1}-byte L1 of {target}"
        return None
    return check


def _contiguous_named(match: re.Match[str], sentence: str, record: Mapping[str, Any]) -> str | None:
    tensor, var = match.group(1), match.group(2)
    parent = record.get("parent") or {}
    try:
        program = program_from_json(parent["program"])
    except Exception:  # a record whose state does not parse cannot confirm a claim about it
        return f"claims {match.group(0)!r}, but the record's before state cannot be read"
    for _path, ref, _loops in tensor_refs_in(program.body, tensor):
        if not ref.indices:
            continue
        forms = [affine_form(index) for index in ref.indices]
        if forms[-1] is not None and forms[-1].coeff(var) == 1 and all(
                f is None or f.coeff(var) == 0 for f in forms[:-1]):
            return None
    return f"claims {match.group(0)!r}, but no reference to {tensor} has stride 1 along {var}"


def _contiguous_access(match: re.Match[str], sentence: str, record: Mapping[str, Any]) -> str | None:
    found = estimate(record)
    if found is None:
        return f"claims {match.group(0)!r}, but the record has no innermost stride to check it against"
    stride = found["child"]["innermost_stride"]
    if stride != 1:
        return f"claims {match.group(0)!r}, but the after state's innermost stride is {stride}"
    return None


def _fewer_instructions(match: re.Match[str], sentence: str, record: Mapping[str, Any]) -> str | None:
    found = estimate(record)
    claimed = int(match.group(1))
    if found is None:
        return f"claims {claimed}x fewer instructions, but the record has no vector width to check it against"
    before, after = found["parent"]["vector_width"], found["child"]["vector_width"]
    if after != claimed * before:
        return (f"claims {claimed}x fewer instructions, but the modelled vector width goes from {before} to "
                f"{after}")
    return None


@dataclass(frozen=True)
class Rule:
    """One kind of claim: where it is, how the record decides it, and what is dropped when it fails."""

    name: str
    pattern: re.Pattern[str]
    check: Check
    #: ``sentence``: the whole sentence goes; ``match``: only the matched clause does.
    drop: str = "sentence"


RULES: tuple[Rule, ...] = (
    Rule("enabling", re.compile(r"\b(?:an enabling step|enables)\b", re.I), _credit),
    Rule("fits in cache", re.compile(r"\b(?:stays|fits) in (?:the )?(?:L1|cache)\b"), _cache(True)),
    Rule("misses cache", re.compile(r"\bdoes not (?:stay|fit) in (?:the )?(?:L1|cache)\b"), _cache(False)),
    Rule("contiguous", re.compile(r"\b([A-Za-z]\w*) is contiguous along ([A-Za-z]\w*)"), _contiguous_named),
    Rule("contiguous access", re.compile(r"\bcontiguous (?:load|store|access)"), _contiguous_access),
    Rule("fewer instructions", re.compile(r", so the block issues about (\d+)x fewer instructions"),
         _fewer_instructions, drop="match"),
)

#: Credit the template cannot give, reworded before anything is checked (the same bytes every time).
_REWORDINGS = ((re.compile(r"\bAn enabling step\b"), "Meant to enable a later step"),
               (re.compile(r"\ban enabling step\b"), "meant to enable a later step"),
               (re.compile(r"\benables\b"), "can enable"))

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def sentences(text: str) -> list[str]:
    """``text`` split after each full stop followed by a capital (fragments keep their dots)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def claim_problems(text: str, record: Mapping[str, Any]) -> list[str]:
    """Every claim of ``text`` (a strategy's rationale) that the record contradicts or cannot confirm."""
    problems = []
    for sentence in sentences(text):
        for rule in RULES:
            for match in rule.pattern.finditer(sentence):
                problem = rule.check(match, sentence, record)
                if problem is not None:
                    problems.append(f"{rule.name}: {problem}")
    return problems


def checked_text(text: str, record: Mapping[str, Any]) -> str:
    """``text`` with credit reworded and every clause or sentence whose claim fails dropped."""
    for pattern, replacement in _REWORDINGS:
        text = pattern.sub(replacement, text)
    kept = []
    for sentence in sentences(text):
        keep = True
        for rule in RULES:
            for match in list(rule.pattern.finditer(sentence)):
                if rule.check(match, sentence, record) is None:
                    continue
                if rule.drop == "match":
                    sentence = sentence.replace(match.group(0), "")
                else:
                    keep = False
        if keep:
            kept.append(sentence)
    return " ".join(kept)
