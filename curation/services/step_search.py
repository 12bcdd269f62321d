"""The steps search page's query: the shared step filters, the disagreement filter, one page of results.

Filters are the API's (``queries.filter_steps``: strategy, level, workload, statuses, free text in the
traces); ``disagreement`` narrows to steps whose first two reviewers disagreed — what the dashboard's
agreement table links to. Only the fields the results table shows are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator

from curation.models import Exactness, ReviewStatus, StepOrigin, VerificationStatus, Workload
from curation.services.agreement import disagreeing_steps
from curation.services.queries import STEP_FILTERS, filter_steps

#: Every GET parameter the page understands, in the order the form shows them (``page`` aside).
SEARCH_KEYS: tuple[str, ...] = (*STEP_FILTERS, "q", "disagreement")
PAGE_SIZE = 50


@dataclass
class StepSearch:
    page: Page
    params: dict[str, str]
    query: str

    @property
    def count(self) -> int:
        return self.page.paginator.count


def clean_params(params: Mapping[str, str]) -> dict[str, str]:
    """The non-empty search parameters (what a shareable URL needs), in a stable order."""
    return {key: str(params.get(key)).strip() for key in SEARCH_KEYS if str(params.get(key) or "").strip()}


def query_string(params: Mapping[str, str], **extra: Any) -> str:
    return urlencode({**clean_params(params), **{k: v for k, v in extra.items() if v}})


def search_steps(params: Mapping[str, str], page: str | int | None = None) -> StepSearch:
    """One page of the steps matching ``params``; raises ``queries.InvalidFilter`` on a malformed value."""
    cleaned = clean_params(params)
    steps = filter_steps(cleaned)
    if cleaned.get("disagreement"):
        steps = steps.filter(pk__in=disagreeing_steps(cleaned.get("strategy") or None))
    steps = steps.only("id", "step_id", "strategy", "level", "exactness", "depth", "verification_status",
                       "review_status", "origin", "created_at", "workload__id", "workload__name",
                       "before__id", "after__id")
    return StepSearch(Paginator(steps, PAGE_SIZE).get_page(page), cleaned, query_string(cleaned))


def filter_options() -> dict[str, list[tuple[str, str]]]:
    """The choices of the form's selects (strategies from the catalogue, workloads from the table)."""
    from leir.strategies import all_strategies
    from leir.strategies.base import Level

    return {
        "strategy": [(s.name, f"{s.number}. {s.name}") for s in all_strategies()],
        "level": [(level.value, level.value) for level in Level],
        "workload": [(n, n) for n in Workload.objects.order_by("name").values_list("name", flat=True)],
        "verification_status": list(VerificationStatus.choices),
        "review_status": list(ReviewStatus.choices),
        "exactness": list(Exactness.choices),
        "origin": list(StepOrigin.choices),
    }
