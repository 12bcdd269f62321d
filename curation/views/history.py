"""The step page's history panel: each audit event as a compact diff instead of two full copies.

A trace or LEIR edit is shown as the unified diff of the changed lines (one line of context); stored LEIR
is canonical (one line), so both sides are pretty-printed first and the diff follows the program's blocks.
Short values (statuses, review outcomes) keep the "from → to" form, and a discarded draft is shown whole,
because it is the only place that text lives. Everything is rendered through autoescaping.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from curation.models import AuditEvent

#: Fields whose values are texts worth a line diff.
TEXT_FIELDS = frozenset({"trace_text", "after_leir"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _leir_lines(text: str) -> list[str]:
    """Pretty LEIR lines of a stored (canonical) body; the raw text when it does not parse."""
    from leir.errors import LeirError
    from leir.parser import parse_body
    from leir.printer import pretty

    try:
        return pretty(parse_body(text)).splitlines()
    except LeirError:
        return text.splitlines()


def _prose_lines(text: str) -> list[str]:
    """A trace as lines and sentences, so one changed sentence is not a whole changed paragraph."""
    return [piece for line in text.splitlines() for piece in _SENTENCE_END.split(line) if piece]


def diff_lines(field: str, old: str, new: str) -> list[tuple[str, str]]:
    """(kind, text) rows of the unified diff ``old`` → ``new``; kind: ``hunk``, ``add``, ``del``, ``same``."""
    split = _leir_lines if field == "after_leir" else _prose_lines
    rows: list[tuple[str, str]] = []
    for line in difflib.unified_diff(split(old), split(new), n=1, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        kind = {"@": "hunk", "+": "add", "-": "del"}.get(line[:1], "same")
        rows.append((kind, line))
    return rows


def history_rows(events: Iterable[AuditEvent]) -> list[dict[str, Any]]:
    """What the panel shows per event: who/when/field, and a ``diff``, a ``draft`` or ``old``/``new``."""
    rows = []
    for event in events:
        row: dict[str, Any] = {"event": event, "diff": None, "draft": None}
        if event.field in TEXT_FIELDS:
            row["diff"] = diff_lines(event.field, event.old, event.new)
        elif event.field.startswith("discarded_draft:"):
            row["draft"] = event.old
        rows.append(row)
    return rows
