"""Workloads in: the built-in suite, an uploaded file, an API call — each with its source state.

Importing is idempotent: a workload is keyed by name, and re-importing an unchanged one changes nothing
(its source state is keyed by content hash). A source that does not translate is kept with the reason,
so a curator sees why instead of losing the upload.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from curation.models import Origin, ProgramState, TranslationStatus, Workload
from curation.services.roles import AnyUser, Role, require
from curation.services.translation import TranslationFailure, translate_source


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def store_state(workload: Workload, program_json: dict[str, Any], *, parent: ProgramState | None = None,
                depth: int = 0) -> tuple[ProgramState, bool]:
    """The state for a program (created on first sight; the same content always maps to one row)."""
    from leir.program import program_from_json, program_hash

    digest = program_hash(program_from_json(program_json))
    found: tuple[ProgramState, bool] = ProgramState.objects.get_or_create(
        workload=workload, program_hash=digest,
        defaults={"tensors": program_json["tensors"], "leir": program_json["leir"], "parent": parent,
                  "depth": depth})
    return found


def source_state(workload: Workload) -> ProgramState | None:
    """The workload's depth-0 state (the translation of its source), if it translated."""
    found: ProgramState | None = workload.states.filter(depth=0).order_by("id").first()
    return found


def _save(name: str, source: str, *, level: int, origin: str, dtype: str, default_shapes: dict[str, Any],
          licence: str, tags: list[str], provenance: str, user: AnyUser, translate: Callable[[], Any],
          report: ImportReport) -> Workload:
    existing: Workload | None = Workload.objects.filter(name=name).first()
    if existing and existing.source == source and existing.dtype == dtype and existing.states.exists():
        report.unchanged.append(name)
        return existing
    program = translate()
    with transaction.atomic():
        workload, created = Workload.objects.update_or_create(
            name=name, defaults={"level": level, "origin": origin, "source": source, "dtype": dtype,
                                 "default_shapes": default_shapes, "licence": licence, "tags": tags,
                                 "provenance": provenance, "created_by": user})
        if isinstance(program, TranslationFailure):
            workload.translation_error = program.reason
            workload.translation_status = TranslationStatus.FAILED
            report.failed[name] = program.reason
        else:
            workload.translation_error = ""
            workload.translation_status = TranslationStatus.TRANSLATED
            store_state(workload, program)
        workload.save(update_fields=["translation_error", "translation_status"])
    (report.created if created else report.updated).append(name)
    saved: Workload = workload
    return saved


def import_builtin(*, level: int | None = None, names: list[str] | None = None, dtype: str = "f32",
                   progress: Callable[[str], None] | None = None) -> ImportReport:
    """Import the built-in suite (trusted code, translated in-process for speed)."""
    from frontend import translate_file
    from leir.program import program_to_json
    from workloads.registry import WorkloadInfo, list_workloads

    report = ImportReport()
    for info in list_workloads(level):
        if names and info.id not in names and info.name not in names:
            continue

        def translate(info: WorkloadInfo = info) -> dict[str, Any] | TranslationFailure:
            try:
                # as the generator translates them: dead blocks kept, their removal is a step
                return program_to_json(translate_file(info.path, dtype=dtype, keep_dead_blocks=True).program)
            except Exception as exc:  # a built-in that stops translating is reported, not fatal
                return TranslationFailure(f"{type(exc).__name__}: {exc}")

        _save(info.id, info.source(), level=info.level, origin=Origin.BUILTIN, dtype=dtype,
              default_shapes=dict(info.default_shapes), licence=info.license, tags=list(info.tags),
              provenance="steptp built-in suite", user=None, translate=translate, report=report)
        if progress:
            progress(info.id)
    return report


def upload_workload(user: AnyUser, *, name: str, source: str, level: int = 1, dtype: str = "f32",
                    origin: str = Origin.UPLOAD, sets: dict[str, Any] | None = None,
                    licence: str = "", provenance: str = "") -> tuple[Workload, ImportReport]:
    """A curator's uploaded source: translated only inside the sandbox (it is untrusted code)."""
    require(user, Role.CURATOR, "uploading a workload")
    report = ImportReport()
    workload = _save(name, source, level=level, origin=origin, dtype=dtype, default_shapes=dict(sets or {}),
                     licence=licence, tags=[], provenance=provenance or f"uploaded by {user}", user=user,
                     translate=lambda: translate_source(source, name=name, dtype=dtype, sets=sets),
                     report=report)
    return workload, report
