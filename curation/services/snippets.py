"""Where a text search matched a step: a short excerpt with the query's words marked.

The search itself is PostgreSQL full-text search over the trace (``queries.search_traces``), which matches
word stems ("tiles" finds "tiling"); the excerpt looks for each query word, and failing that for its stem
(the word less a common English ending), in the trace and then in the after-state's LEIR. It returns
plain-text pieces, each flagged as marked or not: the template escapes every piece and wraps the marked
ones in ``<mark>``, so no stored text is ever trusted as HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Characters of context kept before and after the first match.
BEFORE, AFTER = 60, 120
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s", "e", "y")
_WEBSEARCH_WORDS = frozenset({"or", "and", "not"})


@dataclass(frozen=True)
class Snippet:
    """An excerpt of ``source`` (``trace`` or ``leir``) as (text, marked) pieces, with ellipses flagged."""

    source: str
    pieces: tuple[tuple[str, bool], ...]
    cut_start: bool
    cut_end: bool


def _stem(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def query_pattern(query: str) -> re.Pattern[str] | None:
    """A case-insensitive pattern for the query's words (stems, followed by any word characters)."""
    words = [w for w in re.findall(r"\w+", query.lower()) if w not in _WEBSEARCH_WORDS]
    if not words:
        return None
    stems = sorted({_stem(w) for w in words}, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE)


def _excerpt(text: str, pattern: re.Pattern[str]) -> tuple[tuple[tuple[str, bool], ...], bool, bool] | None:
    first = pattern.search(text)
    if first is None:
        return None
    start, end = max(0, first.start() - BEFORE), min(len(text), first.end() + AFTER)
    if start > 0:  # begin and end on a word boundary, not in the middle of one
        space = text.find(" ", start, first.start())
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", first.end(), end)
        end = space if space != -1 else end
    window = text[start:end]
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in pattern.finditer(window):
        if match.start() > at:
            pieces.append((window[at : match.start()], False))
        pieces.append((match.group(), True))
        at = match.end()
    if at < len(window):
        pieces.append((window[at:], False))
    return tuple(pieces), start > 0, end < len(text)


def match_snippet(query: str, trace_text: str, leir: str = "") -> Snippet | None:
    """The excerpt of the trace (else the LEIR) around the query's first match; ``None`` without one."""
    pattern = query_pattern(query)
    if pattern is None:
        return None
    for source, text in (("trace", trace_text), ("leir", leir)):
        found = _excerpt(" ".join(text.split()), pattern) if text else None
        if found is not None:
            pieces, cut_start, cut_end = found
            return Snippet(source, pieces, cut_start, cut_end)
    return None
