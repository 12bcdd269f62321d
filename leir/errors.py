"""The errors the LEIR layer raises on bad input.

Callers (CLI, web app, workers) catch ``LeirError`` and nothing else: the parser promises that no other
exception escapes it for any text, and the checker reports problems as diagnostics, raising
``LeirCheckError`` only through ``require_valid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from leir.semantics import Diagnostic


class LeirError(Exception):
    """Base class of every error about LEIR input."""


class LeirSyntaxError(LeirError):
    """Text that is not LEIR: where it went wrong, what was expected there, and a caret snippet."""

    def __init__(
        self,
        message: str,
        *,
        line: int,
        column: int,
        expected: Sequence[str] = (),
        snippet: str = "",
        code: str = "syntax",
    ) -> None:
        self.message = message
        #: ``syntax``, ``too-deep`` for text nested beyond the limits of docs/leir.md §7, or
        #: ``literal-out-of-range`` for a loop extent beyond them
        self.code = code
        self.line = line
        self.column = column
        self.expected = tuple(expected)
        self.snippet = snippet
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"line {self.line}, column {self.column}: {self.message}"
        if self.expected:
            text += f"; expected one of: {', '.join(self.expected)}"
        if self.snippet:
            text += "\n" + self.snippet
        return text


class LeirCheckError(LeirError):
    """A program that parses but breaks the language's rules; carries every diagnostic at once."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = [f"{len(self.diagnostics)} problem(s) in LEIR program:"]
        lines.extend(f"  {d}" for d in self.diagnostics)
        return "\n".join(lines)


class LeirFormatError(LeirError):
    """A ``.leir`` file or JSON document whose signature header is malformed."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


def caret_snippet(text: str, line: int, column: int) -> str:
    """The offending source line with a caret under ``column`` (both 1-based); long lines are windowed."""
    lines = text.splitlines() or [""]
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    start = 0
    if len(source) > 100:
        start = max(0, column - 50)
        source = source[start : start + 100]
    return f"  {source}\n  {' ' * max(0, column - 1 - start)}^"
