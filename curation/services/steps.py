"""Step files in: records written by ``steptp generate`` (here or on other machines) become rows.

Importing is idempotent — a step is keyed by its record's ``step_id``, a state by its content hash within
the workload, a verification by state + parent + target + seed + toolchain — so re-importing a file, or
two files that overlap, changes nothing the second time. Every record is validated against the step
record schema first (``dataset.records``); a bad line names itself and nothing of it is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from curation.models import Origin, ProgramState, Step, StepOrigin, Verification, VerificationStatus, Workload
from curation.services.workloads import store_state


@dataclass
class StepImportReport:
    created: int = 0
    unchanged: int = 0
    #: Records without an after-state (the strategy refused or crashed): counted, not stored as steps.
    without_child: int = 0
    failed_verification: int = 0


def _workload_for(source: Mapping[str, Any]) -> Workload:
    name = source.get("workload") or source.get("id")
    workload: Workload | None = Workload.objects.filter(name=name).first()
    if workload is None:
        workload = Workload.objects.create(name=name, level=source.get("level") or 1, origin=Origin.API,
                                           source="", dtype=source.get("dtype") or "f32",
                                           provenance="created by a step import")
    return workload


def verification_status_of(record: Mapping[str, Any]) -> str:
    """The step's verification status from its record: pass/equal_pass only when accepted.

    An unverified record (``steptp generate --no-verify``) is pending; a failed one is ``error`` when the
    program or the verifier broke, ``fail`` when it ran and did not match.
    """
    verification = record.get("verification")
    if verification and verification.get("accepted"):
        outcome = verification.get("outcome")
        return VerificationStatus.EQUAL_PASS if outcome == "equal_pass" else VerificationStatus.PASS
    if record.get("status") == "unverified" or (not verification and not record.get("failure")):
        return VerificationStatus.PENDING
    outcome = (verification or {}).get("outcome")
    if outcome in ("pass", "equal_pass", "fail"):
        return VerificationStatus.FAIL
    return VerificationStatus.ERROR


def toolchain_of(versions: Mapping[str, Any]) -> str:
    """One comparable string for the toolchain a verification ran with (``tvm=…|tvm_ffi=…``)."""
    return "|".join(f"{k}={v}" for k, v in sorted(versions.items()))[:120]


def record_verification(state: ProgramState, result: Mapping[str, Any], *, step: Step | None = None,
                        parent: ProgramState | None = None) -> tuple[Verification, bool]:
    """Store one ``VerificationResult.to_json()`` once per key; a second store of the same key is a no-op."""
    timing = result.get("timing") or {}
    found: tuple[Verification, bool] = Verification.objects.get_or_create(
        state=state, parent=parent, target=result.get("target", "llvm"), seed=int(result.get("seed", 0)),
        toolchain=toolchain_of(result.get("versions") or {}),
        defaults={
            "step": step, "outcome": result.get("outcome", "fail"),
            "device": _device(result.get("hardware") or {}),
            "max_abs_error": _float(result.get("max_abs_error")),
            "max_rel_error": _float(result.get("max_rel_error")), "result": dict(result),
            "median_seconds": _float(timing.get("median") if isinstance(timing, Mapping) else None),
            "speedup_vs_parent": _float(result.get("speedup_vs_parent")),
            "speedup_vs_source": _float(result.get("speedup_vs_source")),
            "speedup_vs_torch": _float(result.get("speedup_vs_torch")),
            "error_class": str(result.get("error_class") or "")[:80],
            "log_excerpt": str(result.get("log_excerpt") or "")[:4000],
        })
    return found


def _device(hardware: Mapping[str, Any]) -> str:
    return str(hardware.get("gpu") or hardware.get("cpu") or hardware.get("cpu_model") or "")[:200]


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def import_record(record: Mapping[str, Any], report: StepImportReport, *,
                  origin: str = StepOrigin.ENGINE) -> Step | None:
    """Store one validated record (idempotent); ``None`` when it has no after-state."""
    if not record.get("child"):
        report.without_child += 1
        return None
    existing: Step | None = Step.objects.filter(step_id=record["step_id"]).first()
    if existing is not None:
        effect = record.get("effect") or {}
        if effect and existing.effect != effect:  # a later pass linked a follow-up: evidence, not content
            Step.objects.filter(pk=existing.pk).update(effect=effect)
            existing.effect = effect
        report.unchanged += 1
        return existing
    with transaction.atomic():
        workload = _workload_for(record["source"])
        parent_depth = int(record["parent"].get("depth", record["depth"] - 1))
        before, _ = store_state(workload, record["parent"]["program"], depth=parent_depth)
        after, _ = store_state(workload, record["child"]["program"], parent=before, depth=record["depth"])
        trace = record.get("trace") or {}
        status = verification_status_of(record)
        step: Step = Step.objects.create(
            step_id=record["step_id"], workload=workload, before=before, after=after,
            strategy=record["strategy"], number=record["number"], level=record["level"],
            site=record.get("site") or {}, params=record.get("params") or {}, exactness=record["exactness"],
            trace={k: v for k, v in trace.items() if k != "text"}, trace_text=trace.get("text", ""),
            origin=origin, depth=record["depth"], verification_status=status, record=dict(record),
            effect=dict(record.get("effect") or {}))
        verification = record.get("verification")
        if verification and verification.get("result"):
            record_verification(after, verification["result"], step=step, parent=before)
    report.created += 1
    if status in (VerificationStatus.FAIL, VerificationStatus.ERROR):
        report.failed_verification += 1
    return step


def import_records(records: Iterable[Mapping[str, Any]], *,
                   progress: Callable[[int], None] | None = None) -> StepImportReport:
    """Store many records; each is committed on its own so an interrupted import resumes cleanly."""
    report = StepImportReport()
    for count, record in enumerate(records, 1):
        import_record(record, report)
        if progress:
            progress(count)
    return report


def import_step_file(path: str | Path, *, progress: Callable[[int], None] | None = None) -> StepImportReport:
    """Validate every line of a ``steps.jsonl`` first (nothing stored if one is bad), then store them."""
    from dataset.records import load_records

    records = list(load_records(path))
    return import_records(records, progress=progress)
