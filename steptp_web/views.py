"""Project-level views: the JSON health probe and the human home page that shows the same report."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from steptp_web.health import health_report


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 with ``status: ok`` when the database and the broker answer, 503 otherwise (for probes)."""
    report = health_report()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)


@never_cache
@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """Always 200: a person reads the verdict on the page; machines use /healthz."""
    from curation.services.progress import pipeline_progress

    return render(request, "home.html", {"report": health_report(), "progress": pipeline_progress()})
