"""Generating steps for stored workloads: the engine's generator, then the idempotent record import.

Generation writes the step records of one workload to a resumable ``.jsonl`` under ``$STEPTP_VAR_DIR/
generated/`` (the same file format ``steptp generate`` writes on any machine) and imports them. A rerun
— after an interruption or on purpose — skips what is already in the file and what is already in the
database, so it never writes a step twice.

Ingestion is exactly-once and self-repairing: a workload counts as done only when a marker beside its file
says the import finished *and* every step of the file is in the database. A worker killed between the
file and the database (or mid-import) leaves no marker, so ``incomplete_workloads`` hands the workload
back and the rerun completes it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils import timezone

from curation.models import GenerationStatus, Step, TranslationStatus, Workload
from curation.services import dispatch, stalls
from curation.services.roles import AnyUser, Role, require
from curation.services.steps import StepImportReport, import_step_file
from curation.services.workloads import source_state

if TYPE_CHECKING:
    from dataset.generation import VerifyFn
    from leir.ast import Program


class NothingToGenerate(ValueError):
    """The workload has no source state (its source did not translate)."""


class AlreadyGenerating(ValueError):
    """The workload's generation is queued or running already (one at a time)."""


#: What the page's and the API's "generate steps" asks for: depth 1 on seed 0, as ``manage.py demo`` does.
REQUEST_DEPTH = 1
REQUEST_MAX_STEPS_PER_STATE = 12
#: The running generation's message is written at most this often (seconds).
PROGRESS_EVERY_S = 1.0
#: Test-only: seconds to pause after each imported record, so a test can kill a real worker mid-import
#: (the import of a small file takes well under a second). Unset in every real deployment.
IMPORT_PAUSE_ENV = "STEPTP_TEST_IMPORT_PAUSE_S"


def generated_path(workload: Workload, depth: int, seed: int) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", workload.name)
    return Path(settings.VAR_DIR) / "generated" / f"{safe}.d{depth}.s{seed}.jsonl"


def import_marker(path: Path) -> Path:
    """Written after the import of ``path`` finished; its absence means the import may be partial."""
    return path.with_name(path.name + ".imported")


def _step_ids(path: Path) -> list[str]:
    """The step ids of the records in ``path`` that have an after-state (what the import stores)."""
    from dataset.records import load_records

    return [record["step_id"] for record in load_records(path, validate=False) if record.get("child")]


def is_ingested(workload: Workload, depth: int, seed: int) -> bool:
    """The workload's generation finished and every generated step is in the database."""
    path = generated_path(workload, depth, seed)
    if not import_marker(path).exists() or not path.exists():
        return False
    ids = _step_ids(path)
    stored: int = Step.objects.filter(step_id__in=ids).count()
    return stored == len(set(ids))


def incomplete_workloads(depth: int, seed: int = 0) -> list[Workload]:
    """Workloads with a source state whose generation or import has not completed (to queue again)."""
    candidates = Workload.objects.filter(states__depth=0).distinct().order_by("level", "name")
    return [w for w in candidates if not is_ingested(w, depth, seed)]


def _verify_fn(target: str, *, special_values: bool = False) -> VerifyFn:
    from verifier.verify import verify

    def verify_step(after: Program, before: Program) -> dict[str, Any]:
        return verify(after, parent=before, reference="parent", target=target,
                      special_values=special_values).to_json()

    return verify_step


def generate_for_workload(
    workload_pk: int,
    *,
    depth: int = 1,
    seed: int = 0,
    breadth_cap: int = 8,
    max_steps_per_state: int | None = None,
    target: str = "llvm",
    progress: Callable[[int, int], None] | None = None,
) -> StepImportReport:
    """Generate, verify and import the steps reachable within ``depth`` from the workload's source."""
    from dataset.generation import GenerationConfig, Source, generate
    from dataset.records import SourceInfo

    workload = Workload.objects.get(pk=workload_pk)
    state = source_state(workload)
    if state is None:
        raise NothingToGenerate(
            f"{workload.name} has no source state: {workload.translation_error or 'none'}"
        )
    program = state.as_program()
    info = SourceInfo(
        f"{workload.name}@{workload.dtype}#0",
        workload.name,
        workload.level,
        workload.dtype,
        0,
        {},
        state.program_hash,
    )
    path = generated_path(workload, depth, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    config = GenerationConfig(
        depth=depth, seed=seed, breadth_cap=breadth_cap, max_steps_per_state=max_steps_per_state
    )
    from tuner.effect import feature_function

    marker = import_marker(path)
    marker.unlink(missing_ok=True)  # until this run's import has finished
    # N steps are verified again on special and large-magnitude inputs, as ``steptp generate`` does.
    generate([Source(info, program)], config, path, verify=_verify_fn(target), progress=progress,
             verify_special=_verify_fn(target, special_values=True), features=feature_function(target),
             target=target)
    report = import_step_file(path, progress=_import_pause())
    marker.write_text(f"{report.created + report.unchanged}\n", encoding="utf-8")
    return report


def _import_pause() -> Callable[[int], None] | None:
    pause = float(os.environ.get(IMPORT_PAUSE_ENV) or 0)
    return (lambda _count: time.sleep(pause)) if pause > 0 else None


def queue_incomplete(depth: int, *, max_steps_per_state: int | None, seed: int = 0) -> list[Workload]:
    """The restart path (``manage.py demo`` on start): drop the ``generate`` queue's old messages, then queue
    again every pending translation and every workload whose generation or import has not completed — a
    partial import or a generation a killed worker left running included — each marked ``queued``."""
    dispatch.drop_queued(dispatch.GENERATE_QUEUE)
    pending = [TranslationStatus.QUEUED, TranslationStatus.TRANSLATING]
    for upload in Workload.objects.filter(translation_status__in=pending).order_by("pk"):
        stalls.requeue_translation(upload)
    todo = incomplete_workloads(depth, seed=seed)
    for workload in todo:
        stalls.requeue_generation(workload, depth=depth, max_steps_per_state=max_steps_per_state)
    return todo


def request_generation(user: AnyUser, workload: Workload) -> Workload:
    """A curator's "generate steps" (page, API): marked ``queued`` and sent to the ``generate`` queue.

    Refused when the workload has no source state yet or its generation is already queued or running —
    unless a lost worker left it running (``stalls.generation_stalled``): then this is the retry. The
    conditional update makes two clicks at once queue one generation.
    """
    require(user, Role.CURATOR, "generating steps")
    if source_state(workload) is None:
        raise NothingToGenerate(f"{workload.name} has no source state yet: its translation is "
                                f"{workload.translation_status}")
    pending = [GenerationStatus.QUEUED, GenerationStatus.RUNNING]
    rows = Workload.objects.filter(pk=workload.pk)
    if stalls.generation_stalled(workload):  # claim exactly the stalled state this request saw
        rows = rows.filter(generation_status=workload.generation_status,
                           generation_since=workload.generation_since)
    else:
        rows = rows.exclude(generation_status__in=pending)
    claimed = rows.update(generation_status=GenerationStatus.QUEUED, generation_message="",
                          generation_since=timezone.now())
    if not claimed:
        raise AlreadyGenerating(f"generation for {workload.name} is already queued or running")
    dispatch.queue_generation(workload.pk, depth=REQUEST_DEPTH,
                              max_steps_per_state=REQUEST_MAX_STEPS_PER_STATE)
    workload.refresh_from_db()
    return workload


def _record(workload_pk: int, status: str, message: str) -> None:
    """The state and its line, with the time: a worker holding a running generation started before it."""
    Workload.objects.filter(pk=workload_pk).update(generation_status=status, generation_message=message[:300],
                                                   generation_since=timezone.now())


def run_generation(workload_pk: int, *, depth: int = 1, seed: int = 0,
                   max_steps_per_state: int | None = None) -> StepImportReport:
    """The ``generate`` task's body: ``generate_for_workload`` with its state recorded on the workload —
    ``running`` with a progress line, then ``done`` with the count or ``failed`` with one line (and raised,
    so the task's retry policy still applies)."""
    _record(workload_pk, GenerationStatus.RUNNING, "starting")
    counts = {"done": 0, "planned": 0}
    last = [0.0]

    def progress(done: int, planned: int) -> None:
        counts["done"] += done
        counts["planned"] += planned
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            _record(workload_pk, GenerationStatus.RUNNING,
                    f"{counts['done']} of {counts['planned']} steps generated and verified")

    try:
        report = generate_for_workload(workload_pk, depth=depth, seed=seed,
                                       max_steps_per_state=max_steps_per_state, progress=progress)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        _record(workload_pk, GenerationStatus.FAILED, f"{type(exc).__name__}: {first}")
        raise
    plural = "s" if report.created != 1 else ""
    _record(workload_pk, GenerationStatus.DONE,
            f"{report.created} new step{plural} stored, {report.unchanged} already there, "
            f"{report.without_child} refused by their strategy")
    return report
