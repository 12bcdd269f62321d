"""Exports: splits by workload, byte-identical re-runs, a lint, and real clients loading the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.models import Export, ReviewStatus, Step
from curation.services import exports
from curation.services.roles import PermissionDenied, Role

from .fixtures import builtin, engine_step, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def approved_steps():
    steps = []
    for name in ("level1/layer_norm", "level1/conv2d", "level2/conv2d_groupnorm_silu"):
        workload = builtin(name)
        for site in range(2):
            step = engine_step(workload, site=site)
            Step.objects.filter(pk=step.pk).update(review_status=ReviewStatus.APPROVED)
            steps.append(step)
    return steps


def _files(export: Export) -> dict[str, bytes]:
    root = Path(export.directory)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_export_writes_every_format_splits_by_workload_and_reruns_byte_identically(approved_steps, settings,
                                                                                   tmp_path):
    settings.VAR_DIR = tmp_path
    curator = user("cat", Role.CURATOR)
    policy = {"fractions": {"train": 0.5, "test": 0.5}}
    first = exports.create_export(curator, name="steptp-test", split_policy=policy, seed=7, enqueue=False)
    first = exports.run_export(first.pk)
    assert first.status == "done" and first.progress == 1.0
    files = _files(first)
    assert {"README.md", "manifest.json", "messages/train.jsonl", "prompt-completion/test.jsonl",
            "data/messages/train-00000-of-00001.parquet"} <= set(files)
    split_of_workload: dict[str, set[str]] = {}
    for split in ("train", "test"):
        for line in files[f"messages/{split}.jsonl"].decode().splitlines():
            row = json.loads(line)
            assert [t["role"] for t in row["messages"]] == ["system", "user", "assistant"]
            assert set(row) == {"messages", "meta"}
            assert row["meta"]["strategy"] in row["messages"][2]["content"]
            name = next(s.workload.name for s in approved_steps if s.before.leir in row["messages"][1]["content"])
            split_of_workload.setdefault(name, set()).add(split)
    assert all(len(splits) == 1 for splits in split_of_workload.values())  # never split by step
    manifest = json.loads(files["manifest.json"])
    assert sum(manifest["splits"].values()) == len(approved_steps)
    assert first.lint["problem_count"] == 0 and first.lint["rows"] == len(approved_steps)

    again = exports.run_export(exports.create_export(curator, name="steptp-test", split_policy=policy, seed=7,
                                                     enqueue=False).pk)
    assert _files(again) == files  # byte for byte, card and manifest included


def test_hugging_face_datasets_loads_the_parquet_and_jsonl(approved_steps, settings, tmp_path):
    import datasets

    settings.VAR_DIR = tmp_path
    export = exports.create_export(user("cat", Role.CURATOR), name="hf", seed=1, enqueue=False,
                                   split_policy={"fractions": {"train": 1.0}})
    export = exports.run_export(export.pk)
    root = Path(export.directory)
    parquet = datasets.load_dataset("parquet", data_files={"train": str(root / "data/messages/train-*.parquet")})
    assert parquet["train"].num_rows == len(approved_steps)
    assert parquet["train"].features["messages"].feature["role"].dtype == "string"
    jsonl = datasets.load_dataset("json", data_files={"train": str(root / "prompt-completion/train.jsonl")})
    assert set(jsonl["train"].column_names) == {"prompt", "completion", "meta"}
    assert [t["role"] for t in jsonl["train"][0]["prompt"]] == ["system", "user"]
    assert "<answer>" in jsonl["train"][0]["completion"][0]["content"]
    assert "configs:" in (root / "README.md").read_text()


def test_only_curators_export_and_unreviewed_steps_stay_out_unless_asked(approved_steps, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    with pytest.raises(PermissionDenied):
        exports.create_export(user("ann", Role.REVIEWER), name="x", enqueue=False)
    Step.objects.filter(pk=approved_steps[0].pk).update(review_status=ReviewStatus.UNREVIEWED)
    assert exports.select_steps({}).count() == len(approved_steps) - 1
    assert exports.select_steps({"all_verified": True}).count() == len(approved_steps)
    assert exports.select_steps({"strategies": ["loop_tiling"]}).count() == 0


def test_an_export_that_selects_nothing_is_refused_with_what_to_include(approved_steps, settings, tmp_path):
    from django.core.management import CommandError, call_command

    settings.VAR_DIR = tmp_path
    curator = user("cat", Role.CURATOR)
    Step.objects.update(review_status=ReviewStatus.UNREVIEWED)
    with pytest.raises(exports.ExportRefused, match=r"no step is approved yet \(6 verified\).*all verified"):
        exports.create_export(curator, name="empty", enqueue=False)
    with pytest.raises(exports.ExportRefused, match="filters .* leave no step"):
        exports.create_export(curator, name="empty", enqueue=False,
                              filters={"all_verified": True, "strategies": ["loop_tiling"]})
    assert not Export.objects.exists()
    with pytest.raises(CommandError, match="no step is approved yet"):
        call_command("export_dataset", "empty", "--user", "cat")
    user("ann", Role.REVIEWER)
    with pytest.raises(CommandError, match="curator"):  # one line, not a traceback
        call_command("export_dataset", "x", "--user", "ann", "--all-verified")


def test_an_empty_split_is_not_written_and_datasets_loads_the_folder(approved_steps, settings, tmp_path):
    import datasets

    settings.VAR_DIR = tmp_path
    Step.objects.exclude(workload__name="level1/layer_norm").update(review_status=ReviewStatus.UNREVIEWED)
    export = exports.create_export(user("cat", Role.CURATOR), name="one-workload", seed=0, enqueue=False,
                                   split_policy={"fractions": {"train": 0.5, "test": 0.5}})
    export = exports.run_export(export.pk)
    root = Path(export.directory)
    assert list(export.manifest["splits"].values()) == [2]  # one workload: one split, never a 0-row file
    assert all(p.stat().st_size > 0 for p in root.rglob("*.jsonl"))
    loaded = datasets.load_dataset("parquet", data_dir=str(root / "data" / "messages"))
    assert sum(split.num_rows for split in loaded.values()) == 2
