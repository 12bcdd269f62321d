"""The step record: the one contract between generation and everything that reads the dataset.

``steptp generate`` writes one JSON object per line; the curation backend imports them, the exports and
the SFT renderer read them, the tuner replays them. The shape is fixed by ``step_record.schema.json``
(shipped beside this module, documented field by field in ``docs/dataset.md``), and ``load_records``
refuses a line that does not match it, so a malformed record fails where it is read, naming the line and
the field, instead of deep inside an export.

Records are versioned (``schema_version``). ``load_records`` upgrades older versions through
``MIGRATIONS`` (one function per version step) before validating, and refuses versions newer than this
code knows. Every value is plain JSON so that a record round-trips through a file unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from leir.ast import Program
from leir.program import json_program_hash, program_to_json
from strategies.base import AppliedStep, Exactness, Site
from strategies.traces import Trace

SCHEMA_VERSION = 2
SCHEMA_FILE = "step_record.schema.json"


def _v1_to_v2(record: dict[str, Any]) -> dict[str, Any]:
    """Version 2 adds the ``effect`` block; a version-1 record's effect was never computed."""
    return {**record, "effect": empty_effect()}


#: ``MIGRATIONS[v]`` turns a version-``v`` record into a version-``v+1`` one. Version 1 is the first.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


def empty_effect(target: str | None = None) -> dict[str, Any]:
    """The ``effect`` of a step whose effect is not known (no estimate, no measurement)."""
    return {"target": target, "estimate": None, "measured": None, "verdict": "unknown", "follow_up": None}

Record = dict[str, Any]


class RecordError(ValueError):
    """A record that does not match the schema (the message names the line and the field)."""


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of the current record version (package data, so installed copies have it)."""
    text = resources.files("dataset").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator() -> Any:  # jsonschema ships no type information
    import jsonschema

    return jsonschema.Draft202012Validator(schema())


def validation_errors(record: Mapping[str, Any]) -> list[str]:
    """Every way ``record`` violates the schema, as ``field.path: message`` (empty when valid)."""
    problems = []
    for error in sorted(_validator().iter_errors(record), key=lambda e: list(map(str, e.absolute_path))):
        where = ".".join(str(p) for p in error.absolute_path) or "(record)"
        problems.append(f"{where}: {error.message}")
    return problems


def validate_record(record: Mapping[str, Any]) -> None:
    """Raise ``RecordError`` when ``record`` does not match the schema."""
    problems = validation_errors(record)
    if problems:
        raise RecordError("; ".join(problems[:5]))


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` brought to ``SCHEMA_VERSION`` through ``MIGRATIONS``; newer versions are refused."""
    version = record.get("schema_version")
    if not isinstance(version, int):
        raise RecordError("schema_version: missing or not an integer")
    if version > SCHEMA_VERSION:
        raise RecordError(f"schema_version {version} is newer than this steptp reads ({SCHEMA_VERSION}); "
                          "upgrade steptp")
    while version < SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise RecordError(f"schema_version {version} has no migration to {version + 1}")
        record = MIGRATIONS[version](record)
        version += 1
        record["schema_version"] = version
    return record


def load_records(path: str | Path, *, validate: bool = True) -> Iterator[Record]:
    """Every record of a ``.jsonl`` file, upgraded and (by default) validated; errors name the line."""
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = upgrade(json.loads(line))
                if validate:
                    validate_record(record)
            except json.JSONDecodeError as exc:
                raise RecordError(f"{path}:{lineno}: not JSON: {exc}") from None
            except RecordError as exc:
                raise RecordError(f"{path}:{lineno}: {exc}") from None
            yield record


def dumps(record: Mapping[str, Any]) -> str:
    """The record's line: sorted keys, no spaces, no trailing newline (deterministic bytes)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# ---------------------------------------------------------------------------------------- building


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def params_json(params: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): _jsonable(v) for k, v in sorted(params.items())}


def step_id(parent_hash: str, strategy: str, site: Site | None, params: Mapping[str, Any]) -> str:
    """SHA-256 of what makes a step: the parent state, the strategy, the site and the parameters."""
    payload = {"parent": parent_hash, "strategy": strategy, "site": site.key if site is not None else None,
               "params": params_json(params)}
    # ``default=repr``: a strategy bug (a parameter that is not JSON) still gets an id and a failure record.
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=repr).encode()).hexdigest()


def state_json(program: Program, depth: int | None = None) -> dict[str, Any]:
    """``{"hash", "program": {"tensors", "leir"}}`` (plus the state's depth when known)."""
    as_json = program_to_json(program)
    data: dict[str, Any] = {"hash": json_program_hash(as_json), "program": as_json}
    if depth is not None:
        data["depth"] = depth
    return data


def site_json(site: Site, index: int) -> dict[str, Any]:
    return {**site.to_json(), "index": index, "key": site.key}


def trace_json(trace: Trace) -> dict[str, Any]:
    return {**trace.to_json(), "text": trace.render()}


@dataclass(frozen=True)
class SourceInfo:
    """Where a chain of steps started: a workload (or a file) at one dtype and shape variant."""

    id: str
    workload: str | None
    level: int | None
    dtype: str
    variant: int
    sets: Mapping[str, int | float]
    hash: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "workload": self.workload, "level": self.level, "dtype": self.dtype,
                "variant": self.variant, "sets": dict(sorted(self.sets.items())), "hash": self.hash}


def required_outcome(exactness: Exactness | str) -> str:
    """What an accepted step must reach: ``equal_pass`` for exact steps, ``pass`` for the others."""
    return "equal_pass" if Exactness(exactness) is Exactness.E else "pass"


def _unhonoured(result: Mapping[str, Any]) -> list[Any] | None:
    for key, value in result.items():
        if "unhonoured" in key or "unhonored" in key:
            return list(value) if isinstance(value, list | tuple) else [value] if value else []
    return None


#: Where ``verification.result`` keeps the second verification of an N step on special inputs.
SPECIAL_VALUES_KEY = "special_values_check"


def special_values_summary(result: Mapping[str, Any]) -> dict[str, Any]:
    """What the record keeps of the special-values verification: its outcome, errors and why."""
    notes = result.get("notes") or []
    return {"outcome": str(result.get("outcome")), "max_abs_error": result.get("max_abs_error"),
            "max_rel_error": result.get("max_rel_error"), "error": result.get("error"),
            "notes": [str(n) for n in notes][:5]}


def _special_failed(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    special = result.get(SPECIAL_VALUES_KEY)
    if isinstance(special, Mapping) and special.get("outcome") not in ("pass", "equal_pass"):
        return special
    return None


def verification_json(result: Mapping[str, Any], exactness: Exactness | str) -> dict[str, Any]:
    """The record's ``verification``: the acceptance decision, a summary, and the whole result."""
    required = required_outcome(exactness)
    outcome = str(result.get("outcome"))
    accepted = outcome == "equal_pass" if required == "equal_pass" else outcome in ("pass", "equal_pass")
    unhonoured = _unhonoured(result)
    if unhonoured:
        accepted = False  # a loop kind the kernel did not honour: the step claims an effect it lacks
    if _special_failed(result) is not None:
        accepted = False  # an N step that breaks on special or large-magnitude inputs
    tolerances = {name: {k: v for k, v in out.items() if k in ("rtol", "atol") or "bound" in k}
                  for name, out in sorted((result.get("outputs") or {}).items()) if isinstance(out, Mapping)}
    seconds = [result.get(k) for k in ("build_seconds", "run_seconds", "time_seconds")]
    measured = [s for s in seconds if isinstance(s, int | float)]
    return {
        "required": required,
        "accepted": accepted,
        "outcome": outcome,
        "equal_pass": outcome == "equal_pass",
        "max_abs_error": _finite_or_none(result.get("max_abs_error")),
        "max_rel_error": _finite_or_none(result.get("max_rel_error")),
        "tolerances": _finite(tolerances),
        "seconds": sum(measured) if measured else None,
        "versions": {str(k): str(v) for k, v in sorted((result.get("versions") or {}).items())},
        "unhonoured_loops": unhonoured,
        "result": _finite(dict(result)),
    }


def _finite_or_none(value: Any) -> float | None:
    """A measured error for the summary: ``None`` when missing or not finite (the result keeps the text)."""
    if isinstance(value, int | float) and value == value and value not in (float("inf"), float("-inf")):
        return float(value)
    return None


def _finite(value: Any) -> Any:
    """JSON has no NaN/inf: non-finite floats (an inf error of a shape mismatch) become strings."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def verification_failure(verification: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``failure`` of a step whose verification did not meet what its exactness requires."""
    if verification["accepted"]:
        return None
    result = verification["result"]
    outcome = verification["outcome"]
    if verification.get("unhonoured_loops"):
        reason = f"the built kernel did not honour loop kind(s): {verification['unhonoured_loops']}"
        return {"stage": "verification", "kind": "unhonoured_loops", "reason": reason}
    special = _special_failed(result)
    if special is not None and outcome in ("pass", "equal_pass"):
        detail = special.get("error") or "; ".join(special.get("notes") or []) or ""
        reason = (f"numerically equivalent on the seeded inputs, but {special.get('outcome')} on special and "
                  f"large-magnitude inputs (max abs error {special.get('max_abs_error')})"
                  + (f": {detail}" if detail else ""))
        return {"stage": "verification", "kind": "special_values", "reason": reason[:2000]}
    if outcome == "pass" and verification["required"] == "equal_pass":
        reason = ("an exact (E) step must be bitwise equal to its parent; outputs matched only within the "
                  f"tolerance (max abs error {result.get('max_abs_error')})")
        return {"stage": "verification", "kind": "not_bitwise_equal", "reason": reason}
    detail = result.get("error") or "; ".join(result.get("notes") or []) or f"outcome {outcome}"
    return {"stage": "verification", "kind": outcome, "reason": str(detail)[:2000]}


def step_record(*, source: SourceInfo, parent: Program, parent_depth: int, strategy: str, number: int,
                level: str, generator: Mapping[str, Any], site: Site | None = None,
                site_index: int | None = None, params: Mapping[str, Any] | None = None,
                step: AppliedStep | None = None, verification: Mapping[str, Any] | None = None,
                failure: Mapping[str, Any] | None = None,
                parent_state: Mapping[str, Any] | None = None,
                effect: Mapping[str, Any] | None = None) -> Record:
    """Assemble one record; ``status`` follows from what is given (a failure, a verification, neither).

    ``parent_state`` is ``state_json(parent, parent_depth)`` when the caller already has it (printing
    and hashing a state is most of a record's cost, and one state has many steps). ``effect`` is the
    step's ``dataset.effects.effect_json`` (default: unknown).
    """
    params = dict(step.params) if step is not None else dict(params or {})
    site = step.site if step is not None else site
    parent_state = dict(parent_state) if parent_state is not None else state_json(parent, parent_depth)
    ver = dict(verification) if verification is not None else None
    fail = dict(failure) if failure is not None else (verification_failure(ver) if ver is not None else None)
    status = "failed" if fail is not None else ("verified" if ver is not None else "unverified")
    record: Record = {
        "schema_version": SCHEMA_VERSION,
        "step_id": step_id(parent_state["hash"], strategy, site, params),
        "status": status,
        "source": source.to_json(),
        "parent": parent_state,
        "child": state_json(step.after, parent_depth + 1) if step is not None else None,
        "depth": parent_depth + 1,
        "strategy": strategy,
        "number": number,
        "level": level,
        "site": site_json(site, site_index if site_index is not None else 0) if site is not None else None,
        "params": params_json(params),
        "exactness": step.exactness.value if step is not None else None,
        "trace": trace_json(step.trace) if step is not None else None,
        "verification": ver,
        "failure": fail,
        "effect": dict(effect) if effect is not None else empty_effect(),
        "generator": dict(generator),
    }
    return record


def strategy_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many records each strategy has, in catalogue-number order."""
    counts: dict[tuple[int, str], int] = {}
    for record in records:
        key = (int(record.get("number", 0)), str(record.get("strategy")))
        counts[key] = counts.get(key, 0) + 1
    return {name: counts[(number, name)] for number, name in sorted(counts)}
