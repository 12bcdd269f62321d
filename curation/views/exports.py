"""Exports: the list and the create form, one export's progress, files and dataset card, downloads.

Creating goes through ``exports.create_export`` (curators only; the work runs on the ``export`` Celery
queue). The export page polls its progress fragment with htmx while the export is queued or running;
without JavaScript it offers a refresh link. Files are served only when the export's own file list names
them (``exports.file_path``), so a crafted name cannot reach anything else on disk.
"""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from curation.models import Export, RunStatus
from curation.services import dispatch, exports, roles, stalls
from curation.services.cards import render_card
from curation.services.roles import Role, has_role
from curation.views.access import is_htmx, role_required
from curation.views.export_form import ExportForm

LISTED = 50


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def export_list(request: HttpRequest) -> HttpResponse:
    """Every export, newest first; curators also get the create form (and may post it)."""
    form = ExportForm() if has_role(request.user, Role.CURATOR) else None
    status = 200
    if request.method == "POST":
        if not has_role(request.user, Role.CURATOR):
            return HttpResponse("Creating an export needs the curator role.", status=403)
        form = ExportForm(request.POST)
        if form.is_valid():
            try:
                export = exports.create_export(request.user, **form.export_options())
            except (exports.ExportRefused, roles.PermissionDenied) as refused:
                form.add_error(None, str(refused))
            else:
                return redirect("export", pk=export.pk)
        status = 400
    context = {"exports": Export.objects.all()[:LISTED], "form": form}
    return render(request, "curation/exports/index.html", context, status=status)


def _described(options: dict) -> list[str]:
    """``key: a, b`` lines for an export's filters or split policy (lists joined, nested dicts flattened).

    Keys are sorted at every level: PostgreSQL's jsonb does not keep the order they were written in.
    """
    lines = []
    for key, value in sorted(options.items()):
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in sorted(value.items()))
        elif isinstance(value, list | tuple):
            value = ", ".join(map(str, value))
        lines.append(f"{key}: {value}")
    return lines


def _context(export: Export) -> dict:
    active = export.status in (RunStatus.QUEUED, RunStatus.RUNNING)
    return {"export": export, "active": active, "percent": round(export.progress * 100),
            # not "queued 0 %" forever: say when no live worker could pick it up
            "waiting_for_worker": active and stalls.waiting_for_worker(dispatch.EXPORT_QUEUE),
            "filters": _described(export.filters), "split_policy": _described(export.split_policy),
            "card": render_card(export.card) if export.card else None,
            "rows": sum((export.manifest.get("splits") or {}).values())}


@role_required(Role.VIEWER)
def export_detail(request: HttpRequest, pk: int) -> HttpResponse:
    export = get_object_or_404(Export, pk=pk)
    template = "curation/exports/_status.html" if is_htmx(request) else "curation/exports/detail.html"
    return render(request, template, _context(export))


@role_required(Role.VIEWER)
def export_file(request: HttpRequest, pk: int, name: str) -> FileResponse:
    export = get_object_or_404(Export, pk=pk)
    try:
        path = exports.file_path(export, name)
    except exports.NoSuchFile:
        raise Http404(f"export {pk} has no file {name}") from None
    return FileResponse(path.open("rb"), as_attachment=True, filename=name.replace("/", "_"))
