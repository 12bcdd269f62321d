"""Errors of the PyTorch → LEIR frontend.

Both derive from ``LeirError`` so every caller that already handles bad LEIR input (CLI, web app,
workers) also reports a module the frontend cannot translate, instead of crashing on it.
"""

from __future__ import annotations

from leir.errors import LeirError


class FrontendError(LeirError):
    """A source program the frontend cannot load, trace or translate."""


class UnsupportedOperatorError(FrontendError):
    """An operator or usage pattern with no LEIR translation; says which, where, and what is supported.

    Raised instead of emitting anything doubtful: a silently wrong program would poison the dataset.
    """

    def __init__(self, operator: str, *, location: str | None = None, detail: str = "",
                 supported: str = "") -> None:
        self.operator = operator
        self.location = location
        self.detail = detail
        self.supported = supported
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"unsupported operator {self.operator}"
        if self.location:
            text = f"{self.location}: {text}"
        if self.detail:
            text += f": {self.detail}"
        if self.supported:
            text += f" (supported: {self.supported})"
        return text
