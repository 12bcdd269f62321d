"""Dataset exports: curated steps → SFT files, a Hugging Face layout, a dataset card and a manifest.

What an export writes, under ``$STEPTP_VAR_DIR/exports/<id>/``:

* ``messages/<split>.jsonl`` and ``prompt-completion/<split>.jsonl`` — rows rendered by the same code as
  ``steptp render --metadata`` (``dataset.rendering``), so the CLI and the app export one format: the
  training columns (conversational: message lists) and ``meta``, what the row answers (step id,
  workload, source and variant, strategy, level, exactness, target, effect), which trainers ignore;
* ``data/<config>/<split>-00000-of-00001.parquet`` — the same rows as parquet shards (pyarrow), with
  ``README.md`` — the dataset card whose YAML header lists configs, splits, features, licence and sizes,
  and whose body gives the strategy distribution, the token-length distribution per split with the
  ``max_length`` a trainer needs (``export_lengths``), the filtering before/after, the verification and
  review protocol and the toolchain versions. ``filters["over_length"] = "drop"`` leaves out the rows over
  ``filters["max_length"]`` tokens (counted in the card) instead of only reporting them;
* ``steps/<split>.jsonl`` — one line per exported step, in the rows' order: its identity, strategy,
  source, review and ``effect`` (``step_rows``), what a benefit-aware consumer selects on;
* ``records/<split>.jsonl`` — the step records the rows answer (schema v2, ``dataset.records``), as
  ``steptp evaluate`` reads them: the engine's stored record with the step's current programs, trace and
  effect; a step with no complete engine record (made in the app) is left out and counted in the card;
* ``preference/<split>.jsonl`` (format ``preference``) — prompt/chosen/rejected pairs of each split's
  states (``dataset.preference``; an export holds verified steps only, so the rejected ones are slower or
  neutral steps);
* ``manifest.json`` — every file with its size and sha256.

Splits are by source workload, never by step (no program leaks between train and test), assigned from
the seed alone. Same steps + same options + same seed → byte-identical files: rows are ordered by step id,
JSON is written with sorted keys, and nothing time-dependent is written.

An export of 100,000 steps must take seconds, so the work is split where the time went: steps are read
as value rows with each state decoded once (``export_records``), each split is rendered once for every
format and the lint, row files are written without re-encoding shared texts (``export_files``) and the
lint checks what rows share once (``export_lint``). Since issue 42 every row is also tokenised once
(exact lengths for the card, ``export_lengths``) and the prompt-completion parquet holds message lists:
on 6,166 rows (``bench/export.py --steps 20000 --export-steps 10000``) that took the CPU rate from about
4,300 to 2,300 steps per CPU-second. The bytes are those of the plain path, which
``tests/backend/export_oracle.py`` keeps and ``test_curation_export_identity`` compares file by file.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from curation.models import Export, ReviewStatus, RunStatus, Step, VerificationStatus
from curation.services import dispatch
from curation.services.export_files import escape_texts, sha256_of, write_jsonl, write_parquet
from curation.services.export_lengths import length_stats, row_tokens
from curation.services.export_lint import lint_rows
from curation.services.export_records import collect_records
from curation.services.roles import Role, require
from dataset.rendering import META_KEYS

FORMATS = ("messages", "prompt-completion", "parquet", "preference")
#: What an export writes when no format is named (preference pairs are asked for).
DEFAULT_FORMATS = ("messages", "prompt-completion", "parquet")
DEFAULT_SPLITS = {"train": 0.8, "validation": 0.1, "test": 0.1}
DEFAULT_MAX_LENGTH = 8192
#: The card's dtype of each ``meta`` field (``dataset.rendering.META_KEYS``; the rest are strings).
META_DTYPES = {"variant": "int64", "speedup": "float64", "measured": "bool"}


class NoSuchFile(LookupError):
    """A download asked for a file the export did not write."""


class ExportRefused(ValueError):
    """Options that cannot make an export (unknown format, bad split fractions, no step selected)."""


def why_empty(filters: Mapping[str, Any]) -> str:
    """Why ``filters`` select no step, and what to include instead (the refusal a user reads)."""
    verified = Step.objects.filter(
        verification_status__in=[VerificationStatus.EQUAL_PASS, VerificationStatus.PASS])
    approved = verified.filter(review_status=ReviewStatus.APPROVED).count()
    if not verified.exists():
        return "no step has verified yet: wait for the workers (the status page shows their progress)"
    if not filters.get("all_verified") and not approved:
        return (f"no step is approved yet ({verified.count()} verified): approve steps in the review queue, "
                "or include every verified step ('all verified', --all-verified)")
    return ("the filters (levels, strategies, workloads, exactness, policy) leave no step: widen them "
            f"({verified.count()} verified, {approved} approved)")


def export_root() -> Path:
    return Path(settings.VAR_DIR) / "exports"


# ------------------------------------------------------------------------------------------ selection


#: The keys of a ``steps/<split>.jsonl`` line (a step record's, without the programs and the trace).
STEP_ROW_KEYS = ("step_id", "strategy", "number", "level", "exactness", "depth", "source", "review", "effect")


def step_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What ``steps/<split>.jsonl`` holds per rendered record: ``STEP_ROW_KEYS`` (the effect included)."""
    from dataset.rendering import renderable

    return [{key: record.get(key) for key in STEP_ROW_KEYS} for record in records if renderable(record)]


def split_file_bytes(directory: Path, configs: Sequence[str],
                     splits: Sequence[str]) -> dict[tuple[str, str], int]:
    """The card's ``num_bytes`` of each (config, split): its parquet shard's size, else its JSON lines'."""
    out = {}
    for config in configs:
        for split in splits:
            shard = directory / "data" / config.replace("-", "_") / f"{split}-00000-of-00001.parquet"
            lines = directory / config / f"{split}.jsonl"
            out[(config, split)] = next((p.stat().st_size for p in (shard, lines) if p.is_file()), 0)
    return out


def write_step_rows(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    from dataset.records import dumps

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dumps(r) + "\n" for r in step_rows(records)), encoding="utf-8")


#: What an export's record overrides in the stored engine record: the step's current version.
_CURRENT = ("step_id", "strategy", "number", "level", "exactness", "depth", "effect")


def evaluation_record(record: Mapping[str, Any], stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The schema-v2 record ``steptp evaluate`` reads for an exported ``record``: its ``stored`` engine
    record with the current programs, trace text and effect; ``None`` when there is no valid one."""
    from dataset.records import upgrade, validation_errors

    if not stored or "schema_version" not in stored:
        return None
    full = upgrade(json.loads(json.dumps(stored)))
    full.update({key: record[key] for key in _CURRENT if key in record})
    full["parent"] = {**full.get("parent", {}), **record["parent"]}
    full["child"] = {**(full.get("child") or {}), **record["child"]}
    full["trace"] = {**(full.get("trace") or {}), "text": record["trace"]["text"]}
    return None if validation_errors(full) else full


def write_evaluation_records(path: Path, records: Sequence[Mapping[str, Any]],
                             stored: Mapping[str, Mapping[str, Any]]) -> int:
    """``records/<split>.jsonl`` (not written when no record has a valid engine record: an empty file is
    no split); returns how many records had none (left out)."""
    from dataset.records import dumps

    lines, missing = [], 0
    for record in records:
        full = evaluation_record(record, stored.get(record["step_id"]))
        if full is None:
            missing += 1
        else:
            lines.append(dumps(full) + "\n")
    if lines:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")
    return missing


def write_preference_rows(path: Path, records: Sequence[Mapping[str, Any]], seed: int) -> int:
    """``preference/<split>.jsonl``: ``dataset.preference`` pairs of the split's states (none: no file)."""
    from curation.services.export_files import _dump
    from dataset.preference import render_preference

    lines = [_dump(r) + "\n" for r in render_preference(records, seed=seed)]
    if lines:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")
    return len(lines)


def stored_records(step_ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    """The engine records stored for ``step_ids`` (only those that have one), read in batches."""
    out: dict[str, Mapping[str, Any]] = {}
    wanted = sorted(set(step_ids))
    for start in range(0, len(wanted), 2000):
        for step_id, stored in Step.objects.filter(step_id__in=wanted[start:start + 2000]).exclude(
                record={}).values_list("step_id", "record"):
            out[step_id] = stored
    return out


def select_steps(filters: Mapping[str, Any]) -> QuerySet[Step]:
    """The steps an export takes: approved by default, ``all_verified`` adds unreviewed verified ones."""
    accepted = [VerificationStatus.EQUAL_PASS, VerificationStatus.PASS]
    steps = Step.objects.filter(verification_status__in=accepted)
    steps = steps.exclude(exactness="E", verification_status=VerificationStatus.PASS)
    if filters.get("all_verified"):
        steps = steps.exclude(review_status__in=[ReviewStatus.REJECTED, ReviewStatus.DISPUTED])
    else:
        steps = steps.filter(review_status__in=filters.get("review_status") or [ReviewStatus.APPROVED])
    for key, field in (
        ("levels", "level"),
        ("strategies", "strategy"),
        ("exactness", "exactness"),
        ("verification_status", "verification_status"),
        ("workloads", "workload__name"),
    ):
        values = filters.get(key)
        if values:
            steps = steps.filter(**{f"{field}__in": list(values)})
    return steps.select_related("workload", "before", "after").order_by("step_id")


def filter_choices() -> dict[str, list[str]]:
    """What the export form offers: the levels, strategies and workloads that have verified steps."""
    verified = Step.objects.filter(
        verification_status__in=[VerificationStatus.EQUAL_PASS, VerificationStatus.PASS]
    )

    def distinct(field: str) -> list[str]:
        return sorted(set(verified.values_list(field, flat=True).distinct()))

    return {
        "levels": distinct("level"),
        "strategies": distinct("strategy"),
        "workloads": distinct("workload__name"),
    }


# ------------------------------------------------------------------------------------------- splits


def split_of(workload: str, seed: int, fractions: Mapping[str, float]) -> str:
    """The split a source workload belongs to: a seeded hash position against the cumulative fractions."""
    position = int.from_bytes(hashlib.sha256(f"{seed}|{workload}".encode()).digest()[:8], "big") / 2**64
    total = 0.0
    names = list(fractions)
    for name in names:
        total += fractions[name]
        if position < total:
            return name
    return names[-1]


def _fractions(split_policy: Mapping[str, Any]) -> dict[str, float]:
    fractions = dict(split_policy.get("fractions") or DEFAULT_SPLITS)
    if any(v < 0 for v in fractions.values()) or abs(sum(fractions.values()) - 1.0) > 1e-9:
        raise ExportRefused(f"split fractions must be non-negative and sum to 1, got {fractions}")
    if not all(re.fullmatch(r"[a-z][a-z0-9_]*", name) for name in fractions):
        raise ExportRefused("split names are lower-case words")
    return fractions


def assign_splits(
    records: Sequence[Mapping[str, Any]], seed: int, fractions: Mapping[str, float]
) -> dict[str, list[Mapping[str, Any]]]:
    """Records by split, input order kept; each workload's split is hashed once, not once per step."""
    out: dict[str, list[Mapping[str, Any]]] = {name: [] for name in fractions}
    of_workload: dict[str, str] = {}
    for record in records:
        source = record.get("source") or {}
        workload = str(source.get("workload") or source.get("id"))
        split = of_workload.get(workload)
        if split is None:
            split = of_workload[workload] = split_of(workload, seed, fractions)
        out[split].append(record)
    return out


# ------------------------------------------------------------------------------------------- the card


def dataset_card(
    *,
    name: str,
    splits: Mapping[str, int],
    configs: Sequence[str],
    licence: str,
    distribution: Mapping[str, int],
    filtering: Mapping[str, Any] | None,
    versions: Mapping[str, str],
    lint: Mapping[str, Any],
    seed: int,
    filters: Mapping[str, Any],
    lengths: Mapping[str, Mapping[str, Any]] | None = None,
    dropped: Mapping[str, int] | None = None,
    unevaluable: int = 0,
    split_bytes: Mapping[tuple[str, str], int] | None = None,
) -> str:
    """The ``README.md`` dataset card: YAML metadata Hugging Face reads, then the protocol in prose.

    The first config is the default one (``load_dataset(folder)`` needs no config name); ``splits`` are
    the row counts of the files as written (after any over-length rows were dropped)."""
    total = sum(splits.values())
    size = (
        "n<1K"
        if total < 1000
        else "1K<n<10K"
        if total < 10_000
        else "10K<n<100K"
        if total < 100_000
        else "100K<n<1M"
    )
    yaml = [
        "---",
        f"license: {licence}",
        "task_categories:",
        "- text-generation",
        "language:",
        "- en",
        "tags:",
        "- tensor-programs",
        "- compiler-optimization",
        "- step-tp",
        f"pretty_name: {name}",
        "size_categories:",
        f"- {size}",
        "configs:",
    ]
    for index, config in enumerate(configs):
        folder = config.replace("-", "_")
        yaml += [f"- config_name: {folder}"] + (["  default: true"] if index == 0 else []) + ["  data_files:"]
        yaml += [f"  - split: {split}\n    path: data/{folder}/{split}-*.parquet" for split in splits]
    yaml.append("dataset_info:")
    for config in configs:
        folder = config.replace("-", "_")
        yaml += [f"- config_name: {folder}", "  features:"]
        for column in ["messages"] if config == "messages" else ["prompt", "completion"]:
            yaml += [
                f"  - name: {column}",
                "    list:",
                "    - name: content",
                "      dtype: string",
                "    - name: role",
                "      dtype: string",
            ]
        yaml += ["  - name: meta", "    struct:"]
        yaml += [f"    - name: {key}\n      dtype: {META_DTYPES.get(key, 'string')}" for key in META_KEYS]
        # `datasets` reads a split's info only with its num_bytes (else it warns and ignores the sizes)
        yaml += ["  splits:"] + [
            f"  - name: {split}\n    num_bytes: {(split_bytes or {}).get((config, split), 0)}\n"
            f"    num_examples: {count}"
            for split, count in splits.items()
        ]
    yaml.append("---")
    body = [
        f"# {name}",
        "",
        "Step-level supervised fine-tuning data for LLM-guided tensor program optimisation (Step-TP): "
        "each row asks for one atomic optimisation strategy on a LEIR program and answers with a "
        "grounded reasoning trace and the transformed program.",
        "",
        "## Splits",
        "",
        f"Split by source workload (never by step), assigned from the export seed ({seed}).",
        "",
        "| split | rows |",
        "|---|---|",
    ]
    body += [f"| {split} | {count} |" for split, count in splits.items()]
    body += [
        "",
        "Every row has `meta` beside its training columns: the step it answers (`step_id`, `state`), "
        "`workload`, `source` and shape `variant`, `strategy`, `level`, `exactness`, `target` and the "
        "effect (`verdict`, `speedup`, `measured`). TRL's trainers ignore it. `records/<split>.jsonl` "
        "holds the step records the rows answer, for `steptp evaluate records/test.jsonl --url ... "
        "--model ...`"
        + (f" ({unevaluable} step(s) without a complete engine record are not in it)." if unevaluable
           else "."),
    ]
    if lengths:
        body += [
            "",
            "## Row lengths (tokens)",
            "",
            "Each row as a chat model sees it: system, user and assistant turns in ChatML, counted with "
            "Qwen2.5's tokenizer. `max_length` is the smallest multiple of 64 that keeps every row of the "
            "split whole: give a trainer at least that (TRL's `SFTConfig(max_length=...)`; its default "
            "1024 truncates the answers of longer rows).",
            "",
            "| split | rows | min | p50 | p90 | p99 | max | > 1024 | > 2048 | > 4096 | > 8192 | max_length |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for split, s in lengths.items():
            if s.get("rows"):
                over = s["over"]
                cells = [s["rows"], s["min"], s["p50"], s["p90"], s["p99"], s["max"],
                         *(over[str(budget)] for budget in (1024, 2048, 4096, 8192)), s["max_length"]]
                body.append(f"| {split} | " + " | ".join(str(c) for c in cells) + " |")
        if dropped and any(dropped.values()):
            body += ["", f"Rows over {filters.get('max_length', DEFAULT_MAX_LENGTH)} tokens were dropped "
                         "(`over_length: drop`): "
                     + ", ".join(f"{split} {count}" for split, count in dropped.items()) + "."]
    body += ["", "## Strategy distribution", "", "| strategy | rows |", "|---|---|"]
    body += [f"| {strategy} | {count} |" for strategy, count in distribution.items()]
    if filtering:
        body += [
            "",
            f"## Filtering policy `{filtering['policy']}` (seed {filtering['seed']})",
            "",
            "| strategy | before | after |",
            "|---|---|---|",
        ]
        body += [f"| {s} | {n} | {filtering['after'].get(s, 0)} |" for s, n in filtering["before"].items()]
    body += [
        "",
        "## How every row was verified",
        "",
        "Each step's after-state was checked against its signature, lowered deterministically to Apache "
        "TVM TIR, built, run in a sandbox on seeded inputs and compared with its parent state: exact (E) "
        "strategies must be bitwise equal to the parent (equal pass), numerically equivalent (N) ones "
        "within the computation-scaled tolerance (docs/verification.md).",
        "",
        "## Review protocol",
        "",
        "Included review statuses: "
        + (
            "approved and unreviewed verified steps"
            if filters.get("all_verified")
            else ", ".join(filters.get("review_status") or ["approved"])
        )
        + ". Two independent reviews per step; disagreements are adjudicated by a curator.",
        "",
        "## Toolchain",
        "",
    ]
    body += [f"- {k}: {v}" for k, v in sorted(versions.items())]
    body += [
        "",
        "## Lint",
        "",
        f"- rows checked: {lint['rows']}; problems: {lint['problem_count']}",
        f"- token lengths (Qwen tokenizer, {lint['token_sample']} sampled rows): "
        f"max {lint['tokens']['max']}, "
        f"mean {lint['tokens']['mean']:.0f}; {lint['over_max_length']} rows over max_length "
        f"{lint['max_length']} (every row that could be was tokenised)",
        "",
    ]
    return "\n".join(yaml + [""] + body)


# ------------------------------------------------------------------------------------------ the job


def create_export(
    user: AbstractBaseUser,
    *,
    name: str,
    filters: Mapping[str, Any] | None = None,
    split_policy: Mapping[str, Any] | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
    seed: int = 0,
    enqueue: bool = True,
) -> Export:
    """A curator's export request; the work runs on the ``export`` queue."""
    require(user, Role.CURATOR, "creating an export")
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or not formats:
        raise ExportRefused(f"unknown format(s) {unknown}; known: {', '.join(FORMATS)}")
    _fractions(split_policy or {})
    if not select_steps(filters or {}).exists():
        raise ExportRefused(f"nothing to export: {why_empty(filters or {})}")
    export: Export = Export.objects.create(
        name=name,
        filters=dict(filters or {}),
        split_policy=dict(split_policy or {}),
        formats=list(formats),
        seed=seed,
        created_by=user,
    )
    if enqueue:
        dispatch.queue_export(export.pk)
    return export


def run_export(export_pk: int, *, progress: Callable[[float], None] | None = None) -> Export:
    """Write the export's files; a failure is stored on the export, never raised past it."""
    export = Export.objects.get(pk=export_pk)
    Export.objects.filter(pk=export.pk).update(status=RunStatus.RUNNING, progress=0.0, error="")
    try:
        _write_export(export, progress)
    except Exception as exc:  # recorded on the row: the user sees why
        Export.objects.filter(pk=export.pk).update(
            status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}"
        )
        raise
    done: Export = Export.objects.get(pk=export.pk)
    return done


def _set_progress(export: Export, value: float, progress: Callable[[float], None] | None) -> None:
    Export.objects.filter(pk=export.pk).update(progress=min(max(value, 0.0), 1.0))
    if progress:
        progress(value)


def _write_export(export: Export, progress: Callable[[float], None] | None) -> None:
    from dataset.filtering import apply_policy, get_policy
    from dataset.records import strategy_counts
    from dataset.rendering import answered_records, render_texts, row, row_meta
    from verifier.cache import toolchain_versions
    from verifier.tokens import PrefixTokenCounter

    fractions = _fractions(export.split_policy)
    records: list[Mapping[str, Any]] = list(collect_records(select_steps(export.filters)))
    _set_progress(export, 0.3, progress)
    filtering = None
    policy_name = export.filters.get("policy")
    if policy_name:
        result = apply_policy(records, get_policy(policy_name), seed=export.seed)
        filtering = {
            "policy": policy_name,
            "seed": export.seed,
            "before": result.before,
            "after": result.after,
        }
        records = list(result.kept)
    if not records:
        raise ExportRefused(f"nothing to export: {why_empty(export.filters)}")
    # a split with no row is not written: a 0-row parquet file is one `datasets` cannot load
    by_split = {split: rows for split, rows in assign_splits(records, export.seed, fractions).items() if rows}
    directory = export_root() / str(export.pk)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    configs = [f for f in export.formats if f not in ("parquet", "preference")] or ["messages"]
    pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    splits: dict[str, int] = {}
    lengths: dict[str, dict[str, Any]] = {}
    dropped: dict[str, int] = {}
    unevaluable = 0
    max_length = int(export.filters.get("max_length", DEFAULT_MAX_LENGTH))
    counter = PrefixTokenCounter()
    for split, split_records in by_split.items():
        # rendered once per split; every format (and the lint) is a view of the same texts
        texts = list(render_texts(split_records))
        # the records the rows answer (a state with effects answers its best-ranked step only)
        answered = answered_records(split_records)
        tokens = row_tokens(texts, counter)
        if export.filters.get("over_length") == "drop":
            keep = [i for i, t in enumerate(tokens) if t <= max_length]
            dropped[split] = len(texts) - len(keep)
            texts, answered = [texts[i] for i in keep], [answered[i] for i in keep]
            tokens = [tokens[i] for i in keep]
        lengths[split] = length_stats(tokens)
        metas = [row_meta(r) for r in answered]
        escaped = escape_texts(texts)
        splits[split] = len(texts)
        write_step_rows(directory / "steps" / f"{split}.jsonl", split_records)
        # only the answered steps' stored records are read (one per state, not every exported step)
        stored = stored_records([r["step_id"] for r in answered])
        unevaluable += write_evaluation_records(directory / "records" / f"{split}.jsonl", answered, stored)
        if "preference" in export.formats:
            write_preference_rows(directory / "preference" / f"{split}.jsonl", split_records, export.seed)
        for config in configs:
            if config in export.formats:
                write_jsonl(directory / config / f"{split}.jsonl", texts, escaped, config, metas)
            rows = [row(prompt, answer, config) for prompt, answer in texts]
            if "parquet" in export.formats:
                folder = config.replace("-", "_")
                write_parquet(directory / "data" / folder / f"{split}-00000-of-00001.parquet", rows, config,
                              metas)
            if config == "messages":
                pairs += zip(answered, rows, strict=True)
        if "messages" not in configs:
            pairs += zip(answered, (row(p, a, "messages") for p, a in texts), strict=True)
    _set_progress(export, 0.8, progress)
    lint = lint_rows(pairs, max_length=max_length, count_tokens=counter)
    card = dataset_card(
        name=export.name,
        splits=splits,
        configs=configs,
        licence=export.filters.get("licence", "apache-2.0"),
        distribution=strategy_counts(records),
        filtering=filtering,
        versions=toolchain_versions(),
        lint=lint,
        seed=export.seed,
        filters=export.filters,
        lengths=lengths,
        dropped=dropped,
        unevaluable=unevaluable,
        split_bytes=split_file_bytes(directory, configs, list(splits)),
    )
    (directory / "README.md").write_text(card, encoding="utf-8")
    files = [
        {"name": str(p.relative_to(directory)), "bytes": p.stat().st_size, "sha256": sha256_of(p)}
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    ]
    manifest = {
        "name": export.name,
        "seed": export.seed,
        "filters": export.filters,
        "split_policy": {"fractions": fractions},
        "formats": export.formats,
        "splits": splits,
        "files": files,
    }
    (directory / "manifest.json").write_text(
        json.dumps(manifest, sort_keys=True, indent=2) + "\n", encoding="utf-8"
    )
    files.append(
        {
            "name": "manifest.json",
            "bytes": (directory / "manifest.json").stat().st_size,
            "sha256": sha256_of(directory / "manifest.json"),
        }
    )
    Export.objects.filter(pk=export.pk).update(
        status=RunStatus.DONE,
        progress=1.0,
        files=files,
        manifest=manifest,
        card=card,
        lint=lint,
        directory=str(directory),
        finished_at=timezone.now(),
    )
    if progress:
        progress(1.0)


def file_path(export: Export, name: str) -> Path:
    """The path of one of the export's files (refuses anything the manifest does not list)."""
    listed = {f["name"] for f in export.files}
    if name not in listed or not export.directory:
        raise NoSuchFile(name)
    path = (Path(export.directory) / name).resolve()
    if Path(export.directory).resolve() not in path.parents or not path.is_file():
        raise NoSuchFile(name)
    return path
