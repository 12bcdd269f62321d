"""Tuner runs: the list and the start form, one run's explored tree and best-speedup chart, live.

Starting goes through ``tuning.create_trajectory`` and the ``tune`` Celery queue (curators only). The run
page polls its live fragment with htmx while the run is queued or running; the fragment carries the
series as JSON for the Chart.js chart (``static/js/runs.js``) and as a table, so without JavaScript the
numbers are there and a refresh link replaces the polling.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from curation.models import RunStatus, Trajectory
from curation.services import tuning
from curation.services.roles import Role, has_role
from curation.views.access import is_htmx, role_required
from curation.views.run_files import available_files
from curation.views.run_form import RunForm

LISTED = 50


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def run_list(request: HttpRequest) -> HttpResponse:
    """Every run, newest first; curators also get the start form (and may post it)."""
    form = RunForm() if has_role(request.user, Role.CURATOR) else None
    status = 200
    if request.method == "POST":
        if not has_role(request.user, Role.CURATOR):
            return HttpResponse("Starting a tuner run needs the curator role.", status=403)
        form = RunForm(request.POST)
        if form.is_valid():
            try:
                trajectory = tuning.start_trajectory(request.user, **form.run_options())
            except ValueError as refused:
                form.add_error(None, str(refused))
            else:
                return redirect("run", pk=trajectory.pk)
        status = 400
    runs = Trajectory.objects.select_related("workload", "created_by")[:LISTED]
    return render(request, "curation/runs/index.html", {"runs": runs, "form": form}, status=status)


def _context(run: Trajectory) -> dict:
    best_hash = run.best_state.program_hash if run.best_state else None
    if best_hash is None and run.explored:
        best_hash = max(run.explored, key=lambda n: (n["speedup"] or 0.0, n["hash"]))["hash"]
    return {"run": run, "active": run.status in (RunStatus.QUEUED, RunStatus.RUNNING),
            "tree": tuning.tree_of(run.explored),
            "best_path": tuning.best_path_hashes(run.explored, best_hash), "states": len(run.explored),
            "files": available_files(run)}


@role_required(Role.VIEWER)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(Trajectory.objects.select_related("workload", "best_state"), pk=pk)
    template = "curation/runs/_live.html" if is_htmx(request) else "curation/runs/detail.html"
    return render(request, template, _context(run))
