"""The step filters every door shares (API, review pages, exports): one definition of each filter.

Free-text search over traces uses PostgreSQL full-text search (a GIN index on the trace's tsvector, see
migration 0003) and falls back to a case-insensitive substring match on SQLite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from curation.models import Step

#: Query parameters → model fields (exact matches; a comma separates several accepted values).
STEP_FILTERS = {
    "strategy": "strategy",
    "level": "level",
    "exactness": "exactness",
    "workload": "workload__name",
    "verification_status": "verification_status",
    "review_status": "review_status",
    "origin": "origin",
    "depth": "depth",
}


#: Filters whose values are integers.
INTEGER_FILTERS = frozenset({"depth"})


class InvalidFilter(ValueError):
    """A filter value of the wrong type (the message names the filter)."""


def filter_steps(params: Mapping[str, str], steps: QuerySet[Step] | None = None) -> QuerySet[Step]:
    """Steps matching every given filter, newest first; ``q`` searches the traces."""
    steps = Step.objects.all() if steps is None else steps
    for key, field in STEP_FILTERS.items():
        value = params.get(key)
        if value:
            values: list[Any] = [v for v in str(value).split(",") if v]
            if key in INTEGER_FILTERS:
                try:
                    values = [int(v) for v in values]
                except ValueError:
                    raise InvalidFilter(f"{key} takes integers, got {value!r}") from None
            steps = steps.filter(**{f"{field}__in": values})
    text = (params.get("q") or "").strip()
    if text:
        steps = search_traces(steps, text)
    return steps.select_related("workload", "before", "after").order_by("-id")


def search_traces(steps: QuerySet[Step], text: str) -> QuerySet[Step]:
    if connection.vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchVector

        vector = SearchVector("trace_text", config="english")
        return steps.annotate(search=vector).filter(search=SearchQuery(text, config="english",
                                                                        search_type="websearch"))
    for word in text.split():
        steps = steps.filter(trace_text__icontains=word)
    return steps
