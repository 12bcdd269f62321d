"""A refused edit's text, kept in the session across the redirect that follows the refused POST.

A refused save (bad LEIR) or a conflict redirects to a GET page (redirect-after-POST), so a reload never
lands on the POST URL. What the reviewer typed must survive that redirect — bad input loses nothing — so
it waits here, per step and field, until the same field is saved or the draft is discarded.
"""

from __future__ import annotations

from typing import Any, TypedDict

from django.http import HttpRequest

_KEY = "refused_drafts"


class Draft(TypedDict):
    """The text, the step version it was written against, and the problems it was refused for."""

    text: str
    expected_version: int | None
    problems: list[dict[str, Any]]


def _slot(pk: int, field: str) -> str:
    return f"{pk}:{field}"


def keep(request: HttpRequest, pk: int, field: str, text: str, *, expected_version: int | None = None,
         problems: list[dict[str, Any]] | None = None) -> None:
    """Remember a refused draft (replacing an older one of the same step and field)."""
    drafts = dict(request.session.get(_KEY, {}))
    drafts[_slot(pk, field)] = Draft(text=text, expected_version=expected_version, problems=problems or [])
    request.session[_KEY] = drafts


def get(request: HttpRequest, pk: int, field: str) -> Draft | None:
    """The draft kept for this step and field, or ``None``."""
    found: Draft | None = request.session.get(_KEY, {}).get(_slot(pk, field))
    return found


def forget(request: HttpRequest, pk: int, field: str) -> None:
    """Drop the draft once the field was saved or the reviewer chose the other version."""
    drafts = dict(request.session.get(_KEY, {}))
    if drafts.pop(_slot(pk, field), None) is not None:
        request.session[_KEY] = drafts
