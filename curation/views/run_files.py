"""A tuner run's downloads: its best program as a ``.leir`` file and the run files the tuner wrote.

The run files are the ones ``steptp tune`` writes (``tuner.run.write_run``) under
``$STEPTP_VAR_DIR/tuning/``: the measured steps as JSONL step records, the summary JSON and, for an LLM
policy, the transcript. Their paths come from the run's id only, never from the request.
"""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from curation.models import Trajectory
from curation.services import tuning
from curation.services.roles import Role
from curation.views.access import role_required
from tuner.files import run_paths

#: kind → (content type, file-name suffix) of each run file.
RUN_FILES: dict[str, tuple[str, str]] = {
    "records": ("application/x-ndjson", ".jsonl"),
    "summary": ("application/json", ".summary.json"),
    "transcript": ("application/x-ndjson", ".transcript.jsonl"),
}


def available_files(run: Trajectory) -> list[str]:
    """The kinds of run file that exist on disk for this run (a queued or failed run has none)."""
    paths = run_paths(tuning.run_path(run))
    return [kind for kind in RUN_FILES if paths[kind].is_file()]


@role_required(Role.VIEWER)
@require_GET
def best_program(request: HttpRequest, pk: int) -> HttpResponse:
    """The best state as a complete ``.leir`` file (signature, pretty body) that ``steptp check`` reads."""
    from leir.program import dump_program

    run = get_object_or_404(Trajectory.objects.select_related("workload", "best_state"), pk=pk)
    if run.best_state is None:
        raise Http404("this run has no best program yet")
    comment = (f"best program of tuner run #{run.pk} on {run.workload.name}"
               + (f": {run.best_speedup:.3f}x over the source" if run.best_speedup is not None else ""))
    text = dump_program(run.best_state.as_program(), comment=comment)
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-best.leir"'
    return response


@role_required(Role.VIEWER)
@require_GET
def run_file(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    """One of the run's files (``records``, ``summary``, ``transcript``), as written by the tuner."""
    if kind not in RUN_FILES:
        raise Http404(f"unknown run file {kind!r}: {', '.join(RUN_FILES)}")
    run = get_object_or_404(Trajectory, pk=pk)
    path = run_paths(tuning.run_path(run))[kind]
    if not path.is_file():
        raise Http404(f"run #{run.pk} has no {kind} file")
    content_type, suffix = RUN_FILES[kind]
    return FileResponse(path.open("rb"), content_type=content_type, as_attachment=True,
                        filename=f"run-{run.pk}{suffix}")
