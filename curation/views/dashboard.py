"""The dashboard: where the dataset stands (a first version; the dashboard work fills it in)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from curation.services.progress import pipeline_progress
from curation.services.roles import Role
from curation.views.access import role_required


@role_required(Role.VIEWER)
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(request, "curation/dashboard.html", {"progress": pipeline_progress()})
