"""The fast export writes the very bytes the old one did (``export_oracle``), file by file.

The steps are real engine steps on several built-in workloads, some carrying a stored engine record
with a source of its own, some with an edited, non-ASCII trace, so every branch of the record, the
rendering, the line writer, the parquet writer and the lint (over-length rows tokenised in two parts)
is compared against the plain path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.models import ReviewStatus, Step
from curation.services import exports
from curation.services.export_files import _dump, escape_texts, write_jsonl
from curation.services.roles import Role
from strategies.base import StrategyError

from .export_oracle import write_export as oracle_export
from .fixtures import builtin, engine_step, user

WORKLOADS = ("level1/layer_norm", "level1/softmax", "level1/conv2d", "level2/conv2d_groupnorm_silu")


@pytest.fixture
def steps(db):
    made = []
    for name in WORKLOADS:
        workload = builtin(name)
        for strategy, site in (("loop_unrolling", 0), ("loop_unrolling", 1), ("loop_tiling", 0)):
            try:
                made.append(engine_step(workload, strategy=strategy, site=site))
            except StrategyError:  # no such site on this workload: fewer steps, the same check
                continue
    assert len(made) >= 8
    for index, step in enumerate(made):
        update: dict = {"review_status": ReviewStatus.APPROVED if index % 4 else ReviewStatus.UNREVIEWED}
        if index % 3 == 0:
            update["record"] = {"generator": {"version": "0.1.0"}, "parent": {"depth": 0},
                                "source": {"id": f"kb/{step.workload.name}", "workload": step.workload.name}}
        if index % 5 == 1:
            update["trace_text"] = step.trace_text + " — édité: `" + step.before.leir[:12] + "` ✓ \"quoted\"\\n"
        Step.objects.filter(pk=step.pk).update(**update)
    return made


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


CASES = {
    "defaults": {"seed": 0},
    "policy, two splits, over-length rows": {
        "seed": 3,
        "filters": {"policy": "default", "all_verified": True, "max_length": 300},
        "split_policy": {"fractions": {"train": 0.5, "test": 0.5}},
    },
    "prompt-completion only": {
        "seed": 5,
        "filters": {"all_verified": True, "max_length": 900, "strategies": ["loop_unrolling"]},
        "formats": ["prompt-completion", "parquet"],
    },
    "messages jsonl only": {"seed": 9, "filters": {"all_verified": True}, "formats": ["messages"]},
    "rows over max_length dropped": {
        "seed": 1,
        "filters": {"all_verified": True, "max_length": 2400, "over_length": "drop"},
        "formats": ["messages", "parquet", "preference"],
    },
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(CASES))
def test_export_is_byte_identical_to_the_old_path(steps, case, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    options = CASES[case]
    export = exports.create_export(user("cat", Role.CURATOR), name="identity", enqueue=False, **options)
    export = exports.run_export(export.pk)
    assert export.status == "done"
    fast = _files(Path(export.directory))
    old_lint = oracle_export(export, tmp_path / "oracle")
    old = _files(tmp_path / "oracle")
    assert sorted(fast) == sorted(old)
    assert [name for name in fast if fast[name] != old[name]] == []
    assert export.lint == json.loads(json.dumps(old_lint))
    assert export.lint["rows"] > 0
    if options.get("filters", {}).get("over_length") == "drop":
        assert export.lint["over_max_length"] == 0 and "were dropped (`over_length: drop`)" in export.card
        assert sum(export.manifest["splits"].values()) > 0
    elif "max_length" in options.get("filters", {}):
        assert export.lint["over_max_length"] > 0  # the two-part token count really ran on long rows


def test_the_line_writer_writes_what_json_dumps_writes(tmp_path):
    texts = [
        ("a \"quoted\" \\ prompt\n\twith\x01control and ✓ unicode \u2028 sep", "<think>x</think><answer>{}</answer>"),
        ("a \"quoted\" \\ prompt\n\twith\x01control and ✓ unicode \u2028 sep", "second answer \x00 nul"),
        ("", ""),
    ]
    from dataset.rendering import row

    metas = [{"step_id": f"s{i}", "speedup": 1.5 if i else None, "workload": "é \"w\""} for i in range(len(texts))]
    for config in ("messages", "prompt-completion"):
        path = tmp_path / f"{config}.jsonl"
        assert write_jsonl(path, texts, escape_texts(texts), config, metas) == len(texts)
        assert path.read_text(encoding="utf-8") == "".join(
            _dump({**row(p, a, config), "meta": m}) + "\n" for (p, a), m in zip(texts, metas, strict=True))

