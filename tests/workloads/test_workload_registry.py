"""The workload registry: complete, valid metadata, stable ids, and no torch import to list it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workloads import registry
from workloads.registry import WorkloadError, get_workload, list_workloads, read_metadata, shape_constants

REPO = Path(__file__).resolve().parents[2]


def test_suite_sizes_meet_the_issue() -> None:
    assert len(list_workloads(level=1)) >= 70
    assert len(list_workloads(level=2)) >= 60
    assert len(list_workloads(level=3)) >= 20  # issue 46: LLM inference kernels
    assert len(list_workloads()) == sum(len(list_workloads(level=level)) for level in registry.LEVELS)


def test_ids_unique_sorted_and_match_files() -> None:
    infos = list_workloads()
    ids = [info.id for info in infos]
    assert len(set(ids)) == len(ids)
    assert len({info.name for info in infos}) == len(infos), "names must be unique across levels"
    assert ids == sorted(ids, key=lambda i: (int(i.split("/")[0].removeprefix("level")), i.split("/")[1]))
    for info in infos:
        assert info.path == registry.ROOT / f"{info.id}.py"
        assert info.path.is_file()


def test_metadata_fields_are_valid() -> None:
    for info in list_workloads():
        assert info.license == "Apache-2.0"
        assert info.tags and info.ops and info.description
        assert info.level in registry.LEVELS
        assert info.paper_shapes, f"{info.id} has no paper shapes"
        assert set(info.paper_shapes) <= set(info.default_shapes), info.id
        for key, value in info.paper_shapes.items():
            assert value > 0, (info.id, key)


def test_each_file_follows_the_convention() -> None:
    """Model class, get_inputs, get_init_inputs at top level; licence header; no derived module constants."""
    for info in list_workloads():
        source = info.path.read_text(encoding="utf-8")
        assert "SPDX-License-Identifier: Apache-2.0" in source.splitlines()[1], info.id
        tree = ast.parse(source)
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        assert {"Model", "get_inputs", "get_init_inputs"} <= names, info.id
        model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
        methods = {n.name for n in model.body if isinstance(n, ast.FunctionDef)}
        assert {"__init__", "forward"} <= methods, info.id
        # Every UPPER_CASE assignment is a literal knob, so ``--set`` overrides cannot leave stale copies.
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name.isupper() and name != "STEPTP":
                    assert name in info.default_shapes, f"{info.id}: {name} is not a plain literal"


def test_get_workload_round_trip_and_errors() -> None:
    info = list_workloads(level=1)[0]
    assert get_workload(info.id) == info
    assert get_workload(info.id + ".py") == info
    assert get_workload(info.name) == info
    with pytest.raises(WorkloadError):
        get_workload("level1/no_such_workload")
    with pytest.raises(WorkloadError):
        get_workload(f"level2/{info.name}")
    with pytest.raises(WorkloadError):
        list_workloads(level=4)


def test_as_dict_is_json_ready_and_source_is_the_file() -> None:
    info = get_workload("level2/selective_scan")
    data = json.loads(json.dumps(info.as_dict()))
    assert data["id"] == "level2/selective_scan" and data["level"] == 2
    assert data["paper_shapes"] == info.paper_shapes and data["default_shapes"]["SEQ"] == 16
    assert "class Model(nn.Module)" in info.source()


def test_listing_is_deterministic() -> None:
    first = [(i.id, i.tags, i.ops, tuple(i.paper_shapes.items())) for i in list_workloads()]
    registry._scan.cache_clear()
    second = [(i.id, i.tags, i.ops, tuple(i.paper_shapes.items())) for i in list_workloads()]
    assert first == second


def test_registry_does_not_import_torch() -> None:
    script = (
        "import json, sys\n"
        "from workloads.registry import list_workloads\n"
        "infos = list_workloads()\n"
        "print(json.dumps({'n': len(infos), 'torch': 'torch' in sys.modules}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True, timeout=120
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["n"] >= 130
    assert result["torch"] is False


def test_shape_constants_only_literal_knobs() -> None:
    source = "A = 3\nB = 2.5\nC = A * 2\nlower = 4\nFLAG = True\nSTEPTP = {'x': 1}\nNAME = 'x'\n"
    assert shape_constants(source) == {"A": 3, "B": 2.5}


GOOD = """
import torch
N = 4
STEPTP = {"name": "%s", "level": 1, "tags": ["t"], "ops": ["o"], "license": "Apache-2.0",
          "paper_shapes": {"N": 1024}, "description": "d"}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    level = tmp_path / "level1"
    level.mkdir(exist_ok=True)
    path = level / f"{name}.py"
    path.write_text(text)
    return path


def test_read_metadata_accepts_a_good_file(tmp_path: Path) -> None:
    info = read_metadata(_write(tmp_path, "good_one", GOOD % "good_one"))
    assert info.id == "level1/good_one"
    assert info.default_shapes == {"N": 4}
    assert info.paper_shapes == {"N": 1024}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("no_meta", "N = 4\n"),
        ("computed", "STEPTP = dict(name='computed')\n"),
        ("mismatch", GOOD % "other_name"),
        ("bad_level", (GOOD % "bad_level").replace('"level": 1', '"level": 2')),
        ("bad_licence", (GOOD % "bad_licence").replace("Apache-2.0", "MIT")),
        ("bad_paper", (GOOD % "bad_paper").replace('{"N": 1024}', '{"M": 1024}')),
        ("bad_paper_type", (GOOD % "bad_paper_type").replace('{"N": 1024}', '{"N": 1.5}')),
        ("empty_tags", (GOOD % "empty_tags").replace('["t"]', "[]")),
        ("extra_key", (GOOD % "extra_key").replace('"description"', '"colour": 1, "description"')),
        ("CamelCase", GOOD % "CamelCase"),
        ("syntax", "STEPTP = {\n"),
    ],
)
def test_read_metadata_rejects_bad_files(tmp_path: Path, name: str, text: str) -> None:
    with pytest.raises(WorkloadError):
        read_metadata(_write(tmp_path, name, text))


def test_list_workloads_on_another_root(tmp_path: Path) -> None:
    _write(tmp_path, "b_one", GOOD % "b_one")
    _write(tmp_path, "a_one", GOOD % "a_one")
    _write(tmp_path, "_private", "not metadata")
    assert [i.id for i in list_workloads(root=tmp_path)] == ["level1/a_one", "level1/b_one"]


def test_docs_list_every_workload() -> None:
    """docs/workloads.md carries the generated tables (``--update-docs`` regenerates them when adding)."""
    docs = (REPO / "docs" / "workloads.md").read_text(encoding="utf-8")
    assert registry.update_docs(docs) == docs, "tables in docs/workloads.md are stale"
    for level in registry.LEVELS:
        assert registry.markdown_table(level) in docs
        assert f"level{level}/" in docs and f"({len(list_workloads(level=level))})" in docs


def test_update_docs_needs_markers() -> None:
    with pytest.raises(WorkloadError):
        registry.update_docs("# no markers here\n")
    text = "a\n<!-- workloads:level1 -->\nSTALE_ROW\n<!-- /workloads:level1 -->\n" + (
        "<!-- workloads:level2 -->\n<!-- /workloads:level2 -->\n"
        "<!-- workloads:level3 -->\n<!-- /workloads:level3 -->\nz\n"
    )
    updated = registry.update_docs(text)
    assert "STALE_ROW" not in updated and updated.startswith("a\n") and updated.endswith("z\n")
    assert registry.markdown_table(2) in updated


def test_module_entry_point_lists_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert registry.main(["--level", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == [i.id for i in list_workloads(level=2)]


def test_source_programs_translate_the_chosen_workloads_in_registry_order():
    from leir.checker import check
    from workloads.registry import source_programs

    chosen = ["level1/softmax", "level1/gelu"]
    programs = source_programs("f32", ids=chosen)
    assert [wid for wid, _ in programs] == sorted(chosen, key=[w.id for w in list_workloads()].index)
    assert all(check(program).ok for _, program in programs)
