"""The records an export renders, read as plain value rows instead of model instances.

Why not ``Step`` instances: at 100,000 steps, building three model instances per step (step, before,
after through ``select_related``) and decoding every JSON column dominated an export, yet an export reads
only a few columns. Here steps come as ``values_list`` tuples (no instances, no JSON decoded but the
record's ``source``), and each distinct state is read and decoded once and shared by every record that
uses it — steps from one state share its program object, which is also what lets
``dataset.rendering.render_texts`` build one prompt per state.

A record holds what the export's consumers read (rendering, the filtering policy, the split, the lint):
ids, strategy, levels, the source, both programs, the trace text, the review and the effect; not the site, the
parameters or the engine's stored provenance, which no exported file contains.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from curation.models import ProgramState, Step
from dataset.records import empty_effect

#: Rows fetched per round trip (a server-side cursor on PostgreSQL).
CHUNK = 2000

_STEP_FIELDS = (
    "step_id",
    "strategy",
    "number",
    "level",
    "exactness",
    "depth",
    "trace_text",
    "review_status",
    "version",
    "origin",
    "before_id",
    "after_id",
    "workload__name",
    "workload__level",
    "workload__dtype",
    "record__source",
    "effect",
)


def _states(ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """``{id: {"hash", "program": {"tensors", "leir"}}}`` for the states, in batches the backend takes."""
    wanted = sorted(set(ids))
    batch = min(connection.features.max_query_params or 5000, 5000)
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(wanted), batch):
        rows = ProgramState.objects.filter(pk__in=wanted[start : start + batch]).values_list(
            "id", "program_hash", "tensors", "leir"
        )
        for pk, program_hash, tensors, leir in rows:
            out[pk] = {"hash": program_hash, "program": {"tensors": tensors, "leir": leir}}
    return out


def collect_records(steps: QuerySet[Step]) -> list[dict[str, Any]]:
    """The steps of ``steps`` (its order kept) as export records, each reflecting the step's current
    version (an edited trace or LEIR included). A step whose state vanished while it was read (deleted
    concurrently, which cascades to the step) is left out, as if deleted just before."""
    rows = list(steps.values_list(*_STEP_FIELDS).iterator(chunk_size=CHUNK))
    states = _states(id_ for row in rows for id_ in (row[10], row[11]))
    records: list[dict[str, Any]] = []
    for (step_id, strategy, number, level, exactness, depth, trace_text, review_status, version, origin,
         before_id, after_id, workload, workload_level, dtype, source, effect) in rows:
        before, after = states.get(before_id), states.get(after_id)
        if before is None or after is None:
            continue
        records.append(
            {
                "step_id": step_id,
                "status": "verified",
                "strategy": strategy,
                "number": number,
                "level": level,
                "exactness": exactness,
                "depth": depth,
                "source": source
                or {"id": workload, "workload": workload, "level": workload_level, "dtype": dtype},
                "parent": before,
                "child": after,
                "trace": {"text": trace_text},
                "review": {"status": review_status, "version": version, "origin": origin},
                "effect": effect or empty_effect(),
            }
        )
    return records
