"""Workload pages: the list with per-workload figures, and one workload's source, LEIR and state tree."""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from curation.models import ProgramState, Workload
from curation.services.display import leir_display
from curation.services.roles import Role
from curation.services.state_tree import StateNotInWorkload, state_tree
from curation.services.workload_stats import workload_figures
from curation.services.workloads import source_state
from curation.views.access import role_required

PAGE_SIZE = 50


@role_required(Role.VIEWER)
def workload_list(request: HttpRequest) -> HttpResponse:
    workloads = Workload.objects.order_by("level", "name").only("id", "name", "level", "dtype", "origin",
                                                                 "translation_error")
    level = request.GET.get("level", "")
    if level:
        if not level.isdigit():
            return render(request, "curation/workloads/list.html",
                          {"error": f"level takes a number, got {level!r}", "rows": [], "level": level,
                           "levels": _levels()}, status=400)
        workloads = workloads.filter(level=int(level))
    page = Paginator(workloads, PAGE_SIZE).get_page(request.GET.get("page"))
    figures = workload_figures(page.object_list)
    rows = [{"workload": w, "figures": figures[w.pk]} for w in page.object_list]
    return render(request, "curation/workloads/list.html",
                  {"rows": rows, "page": page, "level": level, "levels": _levels(),
                   "level_query": urlencode({"level": level}) if level else ""})


def _levels() -> list[int]:
    return list(Workload.objects.order_by("level").values_list("level", flat=True).distinct())


@role_required(Role.VIEWER)
def workload_detail(request: HttpRequest, pk: int) -> HttpResponse:
    workload = get_object_or_404(Workload, pk=pk)
    source = source_state(workload)
    root = None
    root_param = request.GET.get("root", "")
    if root_param:
        if not root_param.isdigit():
            raise Http404(f"root takes a state number, got {root_param!r}")
        root = get_object_or_404(ProgramState, pk=int(root_param))
    try:
        tree = state_tree(workload, root)
    except StateNotInWorkload as exc:
        raise Http404(str(exc)) from None
    return render(request, "curation/workloads/detail.html", {
        "workload": workload, "source": source, "leir": leir_display(source) if source else None,
        "tree": tree, "rerooted": root is not None,
    })
