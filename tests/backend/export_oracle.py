"""The export as it was written before the streaming rewrite (commit 3433b93), kept as an oracle.

Why: the export's bytes are a contract (same steps + options + seed → same files), so the faster path in
``curation.services.exports`` is checked against this straightforward one — model instances through
``select_related``, every row rendered per format, parquet from Python dicts — file by file, byte for byte
(``tests/backend/test_curation_export_identity.py``), and ``bench/export.py`` times it as the "old path".
Only the parts the rewrite changed are frozen here; the pure helpers it did not touch (splits, the card,
the JSON line and checksum helpers) are imported, so a change to those shows in both paths alike.
Do not "optimise" this module: its value is that it is the old code. (Issue 42 changed what is written —
conversational prompt-completion rows, a ``meta`` column, ``records/``, row lengths in the card — and
those changes are made here the plain way: every row rendered and tokenised on its own.)
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from curation.models import Export, Step
from curation.services.export_files import _dump, parquet_schema
from curation.services.export_files import sha256_of as _sha256
from curation.services.export_lengths import CHATML_TOKENS, length_stats
from curation.services.export_lint import TOKEN_SAMPLE
from curation.services.exports import (
    DEFAULT_MAX_LENGTH,
    _fractions,
    assign_splits,
    dataset_card,
    select_steps,
    split_file_bytes,
    stored_records,
    write_evaluation_records,
    write_preference_rows,
    write_step_rows,
)
from dataset.records import empty_effect


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
    record["effect"] = step.effect or empty_effect()
    return record


_ANSWER = re.compile(r"<answer>(.*)</answer>\s*$", re.DOTALL)
_THINK = re.compile(r"^<think>(.*)</think>", re.DOTALL)
_TICKS = re.compile(r"`([^`]+)`")


def lint_rows(
    rows: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    *,
    max_length: int,
    count_tokens: Callable[[str], int],
) -> dict[str, Any]:
    """The lint as it was: every row parsed and checked on its own."""
    from dataset.rendering import ANSWER_KEYS

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


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(_dump(row) + "\n")


def _write_parquet(path: Path, rows: list[Mapping[str, Any]], config: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(list(rows), schema=parquet_schema(config))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", write_statistics=False, store_schema=False)


def write_export(export: Export, directory: Path) -> dict[str, Any]:
    """Write ``export`` into ``directory`` the old way; the lint report (the files are the point)."""
    from dataset.filtering import apply_policy, get_policy
    from dataset.records import strategy_counts
    from dataset.rendering import SYSTEM, answered_records, render
    from verifier.cache import toolchain_versions
    from verifier.tokens import count_tokens

    fractions = _fractions(export.split_policy)
    records = [step_to_record(step) for step in select_steps(export.filters).iterator(chunk_size=2000)]
    filtering = None
    policy_name = export.filters.get("policy")
    if policy_name:
        result = apply_policy(records, get_policy(policy_name), seed=export.seed)
        filtering = {"policy": policy_name, "seed": export.seed, "before": result.before, "after": result.after}
        records = list(result.kept)
    # like the fast path since issue 41: a split with no row is not written (0-row parquet does not load)
    by_split = {s: rows for s, rows in assign_splits(records, export.seed, fractions).items() if rows}
    directory.mkdir(parents=True)
    configs = [f for f in export.formats if f not in ("parquet", "preference")] or ["messages"]
    rows_by = {
        (config, split): list(render(split_records, config, metadata=True))
        for config in configs
        for split, split_records in by_split.items()
    }
    max_length = int(export.filters.get("max_length", DEFAULT_MAX_LENGTH))
    lengths, dropped, unevaluable, kept = {}, {}, 0, {}
    stored = stored_records([r["step_id"] for r in records])
    for split, split_records in by_split.items():
        messages = list(render(split_records, "messages"))
        tokens = [count_tokens(f"{SYSTEM}\n{r['messages'][1]['content']}\n{r['messages'][2]['content']}")
                  + CHATML_TOKENS for r in messages]
        keep = [i for i, t in enumerate(tokens)
                if export.filters.get("over_length") != "drop" or t <= max_length]
        if export.filters.get("over_length") == "drop":
            dropped[split] = len(tokens) - len(keep)
        lengths[split] = length_stats([tokens[i] for i in keep])
        kept[split] = set(keep)
        for config in configs:
            rows_by[(config, split)] = [rows_by[(config, split)][i] for i in keep]
        answered = answered_records(split_records)
        write_step_rows(directory / "steps" / f"{split}.jsonl", split_records)
        unevaluable += write_evaluation_records(directory / "records" / f"{split}.jsonl",
                                                [answered[i] for i in keep], stored)
        if "preference" in export.formats:
            write_preference_rows(directory / "preference" / f"{split}.jsonl", split_records, export.seed)
    for (config, split), rows in rows_by.items():
        if config in export.formats:
            _write_jsonl(directory / config / f"{split}.jsonl", rows)
        if "parquet" in export.formats:
            folder = config.replace("-", "_")
            _write_parquet(directory / "data" / folder / f"{split}-00000-of-00001.parquet", rows, config)
    pairs = [
        (record, row)
        for split, split_records in by_split.items()
        for index, (record, row) in enumerate(zip(split_records, render(split_records, "messages"), strict=True))
        if index in kept[split]
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
        lengths=lengths,
        dropped=dropped,
        unevaluable=unevaluable,
        split_bytes=split_file_bytes(directory, configs, list(splits)),
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
    (directory / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    return lint
