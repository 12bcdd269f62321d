"""Precise positions for errors inside a loop header or a tensor-reference head.

A loop-header run (``B^{16}_{tx=0}``) and a tensor reference head (``A^{f32,g}``) are single lexer
tokens (see ``grammar.lark``): that keeps parsing fast, but when one is malformed the lexer can only
say that no token starts at its first character, so ``B^{2}_{tx= )0}`` used to be reported at the
``B``. This module re-reads such a token piece by piece and names the first character that breaks it
and what was expected there.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_WS = re.compile(r"\s*")

#: One loop: kind, extent, variable and the mandatory zero start, each with what a reader should type.
_LOOP_STEPS: tuple[tuple[str, str], ...] = (
    (r"[LPVUB]", "a loop kind (L, P, V, U or B)"),
    (r"\^", "'^'"),
    (r"\{", "'{'"),
    (r"[0-9]+", "the loop extent (a positive integer)"),
    (r"\}", "'}'"),
    (r"_", "'_'"),
    (r"\{", "'{'"),
    (r"[a-z][a-z0-9_]*", "a loop variable (a lower-case letter, then letters, digits or _)"),
    (r"=", "'='"),
    (r"0", "'0' (every loop starts at 0)"),
    (r"\}", "'}'"),
)
_TREF_STEPS: tuple[tuple[str, str], ...] = (
    (r"[A-Z][a-z]*", "a tensor name"),
    (r"\^", "'^'"),
    (r"\{", "'{'"),
    (r"[a-z0-9]+", "a dtype like f32"),
    (r",", "','"),
    (r"[a-z]+", "a memory scope (g, s or l)"),
    (r"\}", "'}'"),
)
_LOOP_START = re.compile(r"[LPVUB]\s*\^")
_TREF_START = re.compile(r"[A-Z][a-z]*\s*\^")
#: A complete loop right before the offset: the lexer took the run up to there as one header token.
_LOOP_BEFORE = re.compile(r"[LPVUB]\s*\^\s*\{\s*[0-9]+\s*\}\s*_\s*\{\s*[a-z][a-z0-9_]*\s*=\s*0\s*\}\s*\Z")


class TokenError(NamedTuple):
    """Where a malformed header breaks: offset into the text, what is there, and what was expected."""

    offset: int
    found: str
    expected: str
    what: str


def _scan(text: str, offset: int, steps: tuple[tuple[str, str], ...]) -> tuple[int, TokenError | None]:
    """Match ``steps`` from ``offset`` (whitespace allowed between them); the end or the first break."""
    position = offset
    for index, (pattern, expected) in enumerate(steps):
        if index:
            position = _WS.match(text, position).end()  # type: ignore[union-attr]
        match = re.compile(pattern).match(text, position)
        if match is None:
            found = repr(text[position]) if position < len(text) else "end of input"
            return position, TokenError(position, found, expected, "")
        position = match.end()
    return position, None


def token_error(text: str, offset: int, accepted: set[str]) -> TokenError | None:
    """The real fault of a loop header or tensor head starting at ``offset``, if one starts there.

    ``accepted`` holds the grammar terminals valid at ``offset``: a header is only diagnosed where the
    parser would have taken one, so ``B^`` inside an expression is still read as a tensor name.
    ``None`` when the text there is no malformed header (the caller keeps lark's own message).
    """
    in_header = "LOOPS" in accepted or _LOOP_BEFORE.search(text[max(0, offset - 200) : offset]) is not None
    if in_header and _LOOP_START.match(text, offset):
        position = offset
        while _LOOP_START.match(text, position):
            position, error = _scan(text, position, _LOOP_STEPS)
            if error is not None:
                return error._replace(what="loop header")
            position = _WS.match(text, position).end()  # type: ignore[union-attr]
        return None
    if "TREF" in accepted and _TREF_START.match(text, offset):
        _, error = _scan(text, offset, _TREF_STEPS)
        if error is not None:
            return error._replace(what="tensor reference")
    return None


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column
