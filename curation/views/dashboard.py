"""The dashboard: where the dataset stands — statuses, balance, pass rates, reviewers, agreement, queues."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from curation.services import dashboard as figures
from curation.services.reviews import current_policy
from curation.services.roles import Role
from curation.views.access import role_required


@role_required(Role.VIEWER)
def dashboard(request: HttpRequest) -> HttpResponse:
    board = figures.dashboard()
    context = {"board": board, "charts": figures.chart_data(board), "progress": board.progress,
               "heat_maps": [board.verified_heat, board.approved_heat], "policy": current_policy()}
    return render(request, "curation/dashboard.html", context)
