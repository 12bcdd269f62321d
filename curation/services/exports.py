"""Dataset exports: curated steps → SFT files, a Hugging Face layout, a dataset card and a manifest.

What an export writes, under ``$STEPTP_VAR_DIR/exports/<id>/``:

* ``messages/<split>.jsonl`` and ``prompt-completion/<split>.jsonl`` — rows rendered by the same code as
  ``steptp render`` (``leir.strategies.rendering``), so the CLI and the app export one format;
* ``data/<config>/<split>-00000-of-00001.parquet`` — the same rows as parquet shards (pyarrow), with
  ``README.md`` — the dataset card whose YAML header lists configs, splits, features, licence and sizes,
  and whose body gives the strategy distribution, the filtering before/after, the verification and review
  protocol and the toolchain versions;
* ``manifest.json`` — every file with its size and sha256.

Splits are by source workload, never by step (no program leaks between train and test), assigned from
the seed alone. Same steps + same options + same seed → byte-identical files: rows are ordered by step id,
JSON is written with sorted keys, and nothing time-dependent is written.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from curation.models import Export, ReviewStatus, RunStatus, Step, VerificationStatus
from curation.services.roles import Role, require

FORMATS = ("messages", "prompt-completion", "parquet")
DEFAULT_SPLITS = {"train": 0.8, "validation": 0.1, "test": 0.1}
DEFAULT_MAX_LENGTH = 8192
CHUNK = 2000
#: Rows tokenised for the mean/max token length an export reports (seeded sample).
TOKEN_SAMPLE = 1000


class NoSuchFile(LookupError):
    """A download asked for a file the export did not write."""


class ExportRefused(ValueError):
    """Options that cannot make an export (unknown format, bad split fractions)."""


def export_root() -> Path:
    return Path(settings.VAR_DIR) / "exports"


# ------------------------------------------------------------------------------------------ selection


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


def step_to_record(step: Step) -> dict[str, Any]:
    """The step as a step record, reflecting its *current* version (edited trace or LEIR included)."""
    record = json.loads(json.dumps(step.record)) if step.record else {}
    record.update(
        {
            "step_id": step.step_id,
            "status": "verified",
            "strategy": step.strategy,
            "number": step.number,
            "level": step.level,
            "exactness": step.exactness,
            "depth": step.depth,
            "site": step.site,
            "params": step.params,
        }
    )
    record.setdefault(
        "source",
        {
            "id": step.workload.name,
            "workload": step.workload.name,
            "level": step.workload.level,
            "dtype": step.workload.dtype,
        },
    )
    record["parent"] = {
        **record.get("parent", {}),
        "hash": step.before.program_hash,
        "program": step.before.as_program_json(),
    }
    record["child"] = {
        **(record.get("child") or {}),
        "hash": step.after.program_hash,
        "program": step.after.as_program_json(),
    }
    record["trace"] = {**step.trace, "text": step.trace_text}
    record["review"] = {"status": step.review_status, "version": step.version, "origin": step.origin}
    return record


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
    out: dict[str, list[Mapping[str, Any]]] = {name: [] for name in fractions}
    for record in records:
        source = record.get("source") or {}
        out[split_of(str(source.get("workload") or source.get("id")), seed, fractions)].append(record)
    return out


# -------------------------------------------------------------------------------------------- lint

_ANSWER = re.compile(r"<answer>(.*)</answer>\s*$", re.DOTALL)
_THINK = re.compile(r"^<think>(.*)</think>", re.DOTALL)
_TICKS = re.compile(r"`([^`]+)`")


def lint_rows(
    rows: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    *,
    max_length: int,
    count_tokens: Callable[[str], int],
) -> dict[str, Any]:
    """Check every (record, messages-row): the answer parses with the promised keys, the trace quotes
    only what the states contain, and the token length fits ``max_length``.

    Tokenising is most of an export's time, so only the rows that *can* exceed ``max_length`` are
    tokenised for that count — a BPE token covers at least one byte, so a row of at most ``max_length``
    UTF-8 bytes never has more tokens — plus a seeded sample of ``TOKEN_SAMPLE`` rows for the reported
    mean and max (all rows when there are fewer). The over-length count is therefore exact.
    """
    from leir.strategies.rendering import ANSWER_KEYS

    problems: list[str] = []
    lengths: list[int] = []
    over = 0
    rows = list(rows)
    sampled = set(random.Random(0).sample(range(len(rows)), min(len(rows), TOKEN_SAMPLE)))
    for index, (record, row) in enumerate(rows):
        answer = row["messages"][-1]["content"]
        prompt = "".join(turn["content"] for turn in row["messages"][:-1])
        match = _ANSWER.search(answer)
        try:
            parsed = json.loads(match.group(1)) if match else None
        except json.JSONDecodeError:
            parsed = None
        objects = parsed if isinstance(parsed, list) else [parsed]
        if parsed is None or not all(
            isinstance(o, dict) and sorted(o) == sorted(ANSWER_KEYS) for o in objects
        ):
            problems.append(f"{record['step_id'][:12]}: answer is not the JSON the prompt promises")
        if not all(key in prompt for key in ANSWER_KEYS):
            problems.append(f"{record['step_id'][:12]}: prompt does not name the answer keys")
        think = _THINK.search(answer)
        texts = record["parent"]["program"]["leir"] + record["child"]["program"]["leir"]
        for fragment in _TICKS.findall(think.group(1) if think else ""):
            if fragment not in texts:
                problems.append(
                    f"{record['step_id'][:12]}: trace quotes `{fragment[:40]}`, not in either state"
                )
        text = prompt + answer
        if index in sampled or len(text.encode("utf-8")) > max_length:
            tokens = count_tokens(text)
            over += tokens > max_length
            if index in sampled:
                lengths.append(tokens)
    return {
        "rows": len(rows),
        "token_sample": len(lengths),
        "problems": problems[:200],
        "problem_count": len(problems),
        "max_length": max_length,
        "over_max_length": over,
        "tokens": {"max": max(lengths, default=0), "mean": (sum(lengths) / len(lengths)) if lengths else 0},
    }


# ------------------------------------------------------------------------------------------ writing


def _dump(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(_dump(row) + "\n")
            count += 1
    return count


def _write_parquet(path: Path, rows: list[Mapping[str, Any]], config: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if config == "messages":
        turn = pa.struct([("content", pa.string()), ("role", pa.string())])
        schema = pa.schema([("messages", pa.list_(turn))])
        table = pa.Table.from_pylist(
            [
                {"messages": [{"content": t["content"], "role": t["role"]} for t in r["messages"]]}
                for r in rows
            ],
            schema=schema,
        )
    else:
        schema = pa.schema([("prompt", pa.string()), ("completion", pa.string())])
        table = pa.Table.from_pylist(
            [{"prompt": r["prompt"], "completion": r["completion"]} for r in rows], schema=schema
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", write_statistics=False, store_schema=False)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
) -> str:
    """The ``README.md`` dataset card: YAML metadata Hugging Face reads, then the protocol in prose."""
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
    for config in configs:
        folder = config.replace("-", "_")
        yaml += [f"- config_name: {folder}", "  data_files:"]
        yaml += [f"  - split: {split}\n    path: data/{folder}/{split}-*.parquet" for split in splits]
    yaml.append("dataset_info:")
    for config in configs:
        folder = config.replace("-", "_")
        yaml += [f"- config_name: {folder}", "  features:"]
        if config == "messages":
            yaml += [
                "  - name: messages",
                "    list:",
                "    - name: content",
                "      dtype: string",
                "    - name: role",
                "      dtype: string",
            ]
        else:
            yaml += ["  - name: prompt", "    dtype: string", "  - name: completion", "    dtype: string"]
        yaml += ["  splits:"] + [
            f"  - name: {split}\n    num_examples: {count}" for split, count in splits.items()
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
    user,
    *,
    name: str,
    filters: Mapping[str, Any] | None = None,
    split_policy: Mapping[str, Any] | None = None,
    formats: Sequence[str] = FORMATS,
    seed: int = 0,
    enqueue: bool = True,
) -> Export:
    """A curator's export request; the work runs on the ``export`` queue."""
    require(user, Role.CURATOR, "creating an export")
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or not formats:
        raise ExportRefused(f"unknown format(s) {unknown}; known: {', '.join(FORMATS)}")
    _fractions(split_policy or {})
    export = Export.objects.create(
        name=name,
        filters=dict(filters or {}),
        split_policy=dict(split_policy or {}),
        formats=list(formats),
        seed=seed,
        created_by=user,
    )
    if enqueue:
        from curation.tasks import run_export

        run_export.apply_async((export.pk,), queue="export")
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
    return Export.objects.get(pk=export.pk)


def _set_progress(export: Export, value: float, progress: Callable[[float], None] | None) -> None:
    Export.objects.filter(pk=export.pk).update(progress=min(max(value, 0.0), 1.0))
    if progress:
        progress(value)


def _write_export(export: Export, progress: Callable[[float], None] | None) -> None:
    from leir.strategies.filtering import apply_policy, get_policy
    from leir.strategies.records import strategy_counts
    from leir.strategies.rendering import render
    from verifier.cache import toolchain_versions
    from verifier.tokens import count_tokens

    fractions = _fractions(export.split_policy)
    steps = select_steps(export.filters)
    total = steps.count()
    records: list[dict[str, Any]] = []
    for index, step in enumerate(steps.iterator(chunk_size=CHUNK)):
        records.append(step_to_record(step))
        if index % CHUNK == 0:
            _set_progress(export, 0.5 * index / max(total, 1), progress)
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
    by_split = assign_splits(records, export.seed, fractions)
    directory = export_root() / str(export.pk)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    configs = [f for f in export.formats if f != "parquet"] or ["messages"]
    rows_by = {
        (config, split): list(render(split_records, config))
        for config in configs
        for split, split_records in by_split.items()
    }
    for (config, split), rows in rows_by.items():
        if config in export.formats:
            _write_jsonl(directory / config / f"{split}.jsonl", rows)
        if "parquet" in export.formats:
            folder = config.replace("-", "_")
            _write_parquet(directory / "data" / folder / f"{split}-00000-of-00001.parquet", rows, config)
    _set_progress(export, 0.8, progress)
    pairs = [
        (record, row)
        for split, split_records in by_split.items()
        for record, row in zip(split_records, render(split_records, "messages"), strict=True)
    ]
    lint = lint_rows(
        pairs, max_length=int(export.filters.get("max_length", DEFAULT_MAX_LENGTH)), count_tokens=count_tokens
    )
    splits = {split: len(rows_by[(configs[0], split)]) for split in by_split}
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
    )
    (directory / "README.md").write_text(card, encoding="utf-8")
    files = [
        {"name": str(p.relative_to(directory)), "bytes": p.stat().st_size, "sha256": _sha256(p)}
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
            "sha256": _sha256(directory / "manifest.json"),
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
