"""Login and role gates for the reviewer pages, and the htmx request test views share."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.urls import NoReverseMatch, reverse

from curation.services.roles import Role, has_role, role_of


def is_htmx(request: HttpRequest) -> bool:
    """True for an htmx partial request (the page then renders only the fragment it swaps)."""
    return request.headers.get("HX-Request") == "true"


def role_required(role: Role) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Login, then the role: anonymous users go to the login page, others without the role get 403."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def gated(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not has_role(request.user, role):
                return HttpResponseForbidden(
                    f"This page needs the {role.label} role; you have {role_of(request.user).label}.")
            return view(request, *args, **kwargs)

        return login_required(gated)

    return decorate


#: The main navigation: (URL name, label, role needed to see it), in display order.
NAVIGATION: tuple[tuple[str, str, Role], ...] = (
    ("dashboard", "Dashboard", Role.VIEWER),
    ("workloads", "Workloads", Role.VIEWER),
    ("queue", "Review", Role.REVIEWER),
    ("steps", "Steps", Role.VIEWER),
    ("exports", "Exports", Role.VIEWER),
    ("runs", "Tuner runs", Role.VIEWER),
)


def _navigation(role: Role, current: str) -> list[dict[str, Any]]:
    links = []
    for name, label, needed in NAVIGATION:
        if role < needed:
            continue
        try:
            url = reverse(name)
        except NoReverseMatch:  # an area not mounted in this deployment
            continue
        links.append({"url": url, "label": label, "current": current == name})
    return links


def roles_context(request: HttpRequest) -> dict[str, Any]:
    """Template context processor: the user's role and what it may do, for showing only allowed actions."""
    role = role_of(getattr(request, "user", None))
    match = getattr(request, "resolver_match", None)
    return {
        "navigation": _navigation(role, match.url_name if match else ""),
        "user_role": role.label,
        "can_review": role >= Role.REVIEWER,
        "can_curate": role >= Role.CURATOR,
        "is_admin_role": role >= Role.ADMIN,
    }
