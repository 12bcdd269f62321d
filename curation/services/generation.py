"""Generating steps for stored workloads: the engine's generator, then the idempotent record import.

Generation writes the step records of one workload to a resumable ``.jsonl`` under ``$STEPTP_VAR_DIR/
generated/`` (the same file format ``steptp generate`` writes on any machine) and imports them. A rerun
— after an interruption or on purpose — skips what is already in the file and what is already in the
database, so it never writes a step twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from curation.models import Workload
from curation.services.steps import StepImportReport, import_step_file
from curation.services.workloads import source_state


class NothingToGenerate(ValueError):
    """The workload has no source state (its source did not translate)."""


def generated_path(workload: Workload, depth: int, seed: int) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", workload.name)
    return Path(settings.VAR_DIR) / "generated" / f"{safe}.d{depth}.s{seed}.jsonl"


def _verify_fn(target: str):
    from verifier.verify import verify

    def verify_step(after, before):
        return verify(after, parent=before, reference="parent", target=target).to_json()

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

    generate([Source(info, program)], config, path, verify=_verify_fn(target), progress=progress,
             features=feature_function(target), target=target)
    return import_step_file(path)
