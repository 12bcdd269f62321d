"""Workload pages: the list with per-workload figures and the upload form, and one workload's source,
LEIR, state tree and live translation/generation state.

An upload (curators) is stored ``queued`` and translated on the ``generate`` queue (``services.uploads``);
the form redirects to the workload page (POST/redirect/GET), whose state line polls its fragment with
htmx while anything is pending and reloads the page when the state moves on, so the LEIR and the steps
appear without a manual refresh (a Refresh link does it without JavaScript).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from curation.models import ProgramState, Step, Workload
from curation.services import dispatch, generation, stalls, uploads
from curation.services.display import leir_display
from curation.services.roles import Role, has_role
from curation.services.state_tree import StateNotInWorkload, state_tree
from curation.services.workload_stats import workload_figures
from curation.services.workloads import source_state
from curation.views.access import role_required
from curation.views.upload_form import UploadForm

PAGE_SIZE = 50


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def workload_list(request: HttpRequest) -> HttpResponse:
    """Every workload with its figures; curators also get the upload form (and may post it)."""
    form = UploadForm() if has_role(request.user, Role.CURATOR) else None
    if request.method == "POST":
        if form is None:
            return HttpResponse("Uploading a workload needs the curator role.", status=403)
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            try:
                workload = uploads.submit_upload(request.user, name=data["name"], source=data["text"],
                                                 level=data["level"], dtype=data["dtype"])
            except uploads.NameTaken as refused:
                form.add_error("name", str(refused))
            except uploads.UploadRefused as refused:
                form.add_error(None, str(refused))
            else:
                return redirect("workload", pk=workload.pk)
        return _list(request, form, status=400)
    return _list(request, form)


def _list(request: HttpRequest, form: UploadForm | None, status: int = 200) -> HttpResponse:
    workloads = Workload.objects.order_by("level", "name").only("id", "name", "level", "dtype", "origin",
                                                                 "translation_error", "translation_status")
    context: dict[str, Any] = {"form": form, "levels": _levels(), "rows": []}
    level = context["level"] = request.GET.get("level", "")
    if level:
        if not level.isdigit():
            context["error"] = f"level takes a number, got {level!r}"
            return render(request, "curation/workloads/list.html", context, status=400)
        workloads = workloads.filter(level=int(level))
    page = Paginator(workloads, PAGE_SIZE).get_page(request.GET.get("page"))
    figures = workload_figures(page.object_list)
    context.update(rows=[{"workload": w, "figures": figures[w.pk]} for w in page.object_list], page=page,
                   level_query=urlencode({"level": level}) if level else "")
    return render(request, "curation/workloads/list.html", context, status=status)


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
        "tree": tree, "rerooted": root is not None, **_state(workload, source is not None),
    })


def _state(workload: Workload, translated: bool) -> dict[str, Any]:
    """The live state line's context: the two states, whether to poll, the key a poll compares."""
    pending = workload.translation_pending or workload.generation_pending
    generation_stalled = stalls.generation_stalled(workload)
    translation_stalled = stalls.translation_stalled(workload)
    return {"pending": pending, "generation_stalled": generation_stalled,
            "translation_stalled": translation_stalled,
            "waiting_for_worker": pending and stalls.waiting_for_worker(dispatch.GENERATE_QUEUE),
            # a stalled state changes the page (the Generate button is back), so the poll reloads it
            "state_key": f"{workload.translation_status}.{workload.generation_status}"
                         f"{'.stalled' if generation_stalled or translation_stalled else ''}",
            "can_generate": translated and (not workload.generation_pending or generation_stalled),
            "step_count": Step.objects.filter(workload=workload).count()}


@role_required(Role.VIEWER)
def workload_state(request: HttpRequest, pk: int) -> HttpResponse:
    """The state line alone (what the page polls); when the state moved past what the page shows, htmx
    is told to reload the page (``HX-Refresh``) so the LEIR, the tree and the buttons follow."""
    workload = get_object_or_404(Workload, pk=pk)
    context = {"workload": workload, **_state(workload, source_state(workload) is not None)}
    response = render(request, "curation/workloads/_state.html", context)
    if request.GET.get("shown") not in (None, context["state_key"]):
        response["HX-Refresh"] = "true"
    return response


@role_required(Role.CURATOR)
@require_POST
def workload_generate(request: HttpRequest, pk: int) -> HttpResponse:
    """"Generate steps": queue depth-1 generation for the workload, then back to its page."""
    workload = get_object_or_404(Workload, pk=pk)
    try:
        generation.request_generation(request.user, workload)
    except (generation.NothingToGenerate, generation.AlreadyGenerating) as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"Generation for {workload.name} is queued.")
    return redirect("workload", pk=workload.pk)


@role_required(Role.CURATOR)
@require_POST
def workload_retry_translation(request: HttpRequest, pk: int) -> HttpResponse:
    """"Retry" of an upload whose translation a lost worker left behind: queued again."""
    workload = get_object_or_404(Workload, pk=pk)
    try:
        stalls.retry_translation(request.user, workload)
    except stalls.NotStalled as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"The translation of {workload.name} is queued again.")
    return redirect("workload", pk=workload.pk)
