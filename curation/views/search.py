"""Steps search: filters and free text over steps, paginated, every state of it a shareable GET URL.

Without JavaScript the form is a plain GET form. With htmx the form's changes fetch only the results
fragment, and the response's ``HX-Push-Url`` puts the same clean URL in the address bar.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from curation.services.queries import InvalidFilter
from curation.services.roles import Role
from curation.services.step_search import (
    SEARCH_KEYS,
    clean_params,
    filter_options,
    query_string,
    search_steps,
)
from curation.views.access import is_htmx, role_required


@role_required(Role.VIEWER)
def steps(request: HttpRequest) -> HttpResponse:
    params = request.GET
    url = reverse("steps")
    clean = query_string(params, page=params.get("page", ""))
    if not is_htmx(request) and any(k in params and not params[k].strip() for k in (*SEARCH_KEYS, "page")):
        return redirect(f"{url}?{clean}" if clean else url)  # a submitted form's empty fields, dropped
    values = clean_params(params)
    context = {"values": values, "selects": [] if is_htmx(request) else _selects(values), "search": None,
               "error": ""}
    status = 200
    try:
        context["search"] = search_steps(params, params.get("page"))
    except InvalidFilter as exc:
        context["error"] = str(exc)
        status = 400
    template = "curation/steps/_results.html" if is_htmx(request) else "curation/steps/list.html"
    response = render(request, template, context, status=status)
    if is_htmx(request):
        response["HX-Push-Url"] = f"{url}?{clean}" if clean else url
    return response


#: The form's selects, in display order, with their labels.
SELECT_LABELS = {"strategy": "Strategy", "level": "Level", "workload": "Workload",
                 "verification_status": "Verification", "review_status": "Review", "exactness": "Exactness",
                 "origin": "Origin"}


def _selects(values: dict[str, str]) -> list[dict[str, Any]]:
    """Each select's options with the URL's value selected (a value outside the choices stays visible)."""
    options = filter_options()
    selects = []
    for key, label in SELECT_LABELS.items():
        choices = list(options[key])
        current = values.get(key, "")
        if current and current not in {value for value, _ in choices}:
            choices.append((current, current))
        selects.append({"key": key, "label": label, "options": [
            {"value": value, "text": text, "selected": value == current} for value, text in choices]})
    return selects
