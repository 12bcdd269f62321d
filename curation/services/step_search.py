"""The steps search page's query: the shared step filters, the disagreement filter, one page of results.

Filters are the API's (``queries.filter_steps``: strategy, level, workload, statuses, free text in the
traces); ``disagreement`` narrows to steps whose first two reviewers disagreed — what the dashboard's
agreement table links to. Only the fields the results table shows are loaded, plus, for a text search,
the page's traces and programs, to show where each step matched (``snippets``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from curation.models import Exactness, ReviewStatus, Step, StepOrigin, VerificationStatus, Workload
from curation.services.agreement import disagreeing_steps
from curation.services.queries import STEP_FILTERS, filter_steps
from curation.services.snippets import Snippet, match_snippet

#: Every GET parameter the page understands, in the order the form shows them (``page`` aside).
SEARCH_KEYS: tuple[str, ...] = (*STEP_FILTERS, "q", "disagreement")
PAGE_SIZE = 50
#: The fields the results table shows (nothing else of a step row is read).
RESULT_FIELDS = ("id", "step_id", "strategy", "level", "exactness", "depth", "verification_status",
                 "review_status", "origin", "created_at", "workload__id", "workload__name")


@dataclass
class StepSearch:
    page: Page | UncountedPage
    params: dict[str, str]
    query: str
    #: step pk → where a text search matched it (``snippets.match_snippet``); empty without ``q``
    snippets: dict[int, Snippet | None] = field(default_factory=dict)

    @property
    def rows(self) -> list[tuple[Any, Snippet | None]]:
        """(step, its match excerpt or None) for each step of the page, for the results table."""
        return [(step, self.snippets.get(step.pk)) for step in self.page.object_list]

    @property
    def count(self) -> int | None:
        """How many steps match; None for a text search (see ``UncountedPage``)."""
        return self.page.paginator.count if self.page.paginator is not None else None


def clean_params(params: Mapping[str, str]) -> dict[str, str]:
    """The non-empty search parameters (what a shareable URL needs), in a stable order."""
    return {key: str(params.get(key)).strip() for key in SEARCH_KEYS if str(params.get(key) or "").strip()}


def query_string(params: Mapping[str, str], **extra: Any) -> str:
    return urlencode({**clean_params(params), **{k: v for k, v in extra.items() if v}})


@dataclass
class UncountedPage:
    """A page of a text search: found by reading one row past it, never by counting every match.

    Computing the trace's text vector is the cost of a search, and a broad search matches most steps; the
    page needs 51 matches, a count would need all of them.
    """

    number: int
    object_list: list[Any]
    has_next: bool
    paginator: None = None

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    def has_other_pages(self) -> bool:
        return self.has_next or self.has_previous

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1

    def start_index(self) -> int:
        return (self.number - 1) * PAGE_SIZE + 1 if self.object_list else 0

    def end_index(self) -> int:
        return (self.number - 1) * PAGE_SIZE + len(self.object_list)


def _uncounted(ids: QuerySet, page: str | int | None) -> UncountedPage:
    try:
        number = max(1, int(page or 1))
    except ValueError:
        number = 1
    start = (number - 1) * PAGE_SIZE
    found = list(ids[start:start + PAGE_SIZE + 1])
    return UncountedPage(number, found[:PAGE_SIZE], len(found) > PAGE_SIZE)


def search_steps(params: Mapping[str, str], page: str | int | None = None) -> StepSearch:
    """One page of the steps matching ``params``; raises ``queries.InvalidFilter`` on a malformed value.

    The page is found on the ids alone (an index-only scan, however deep the page), then only its 50 rows
    are read with their workload. A text search's page is not counted (``UncountedPage``).
    """
    cleaned = clean_params(params)
    steps = filter_steps(cleaned)
    if cleaned.get("disagreement"):
        steps = steps.filter(pk__in=disagreeing_steps(cleaned.get("strategy") or None))
    ids = steps.select_related(None).values_list("id", flat=True)
    found: Page | UncountedPage
    found = _uncounted(ids, page) if cleaned.get("q") else Paginator(ids, PAGE_SIZE).get_page(page)
    query = cleaned.get("q", "")
    page_rows = Step.objects.filter(pk__in=list(found.object_list)).select_related("workload")
    if query:  # the page's 50 traces and programs, for the excerpt of where each matched
        page_rows = page_rows.select_related("workload", "after").only(*RESULT_FIELDS, "trace_text",
                                                                       "after__leir")
    else:
        page_rows = page_rows.only(*RESULT_FIELDS)
    rows = {step.pk: step for step in page_rows}
    found.object_list = [rows[pk] for pk in found.object_list if pk in rows]
    snippets = {step.pk: match_snippet(query, step.trace_text, step.after.leir if step.after_id else "")
                for step in found.object_list} if query else {}
    return StepSearch(found, cleaned, query_string(cleaned), snippets)


def filter_options() -> dict[str, list[tuple[str, str]]]:
    """The choices of the form's selects (strategies from the catalogue, workloads from the table)."""
    from strategies import all_strategies
    from strategies.base import Level

    return {
        "strategy": [(s.name, f"{s.number}. {s.name}") for s in all_strategies()],
        "level": [(level.value, level.value) for level in Level],
        "workload": [(n, n) for n in Workload.objects.order_by("name").values_list("name", flat=True)],
        "verification_status": list(VerificationStatus.choices),
        "review_status": list(ReviewStatus.choices),
        "exactness": list(Exactness.choices),
        "origin": list(StepOrigin.choices),
    }
