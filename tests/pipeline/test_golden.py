"""Behaviour kept byte for byte: a fixed seeded generation and the dataset files made from it.

The restructure of the packages (and any refactor after it) must not change what the pipeline writes. The
golden files under ``golden/`` were written by the code before the move; a deliberate change of the output
(a new schema version, new trace wording) rewrites them with ``STEPTP_WRITE_GOLDEN=1 pytest
tests/pipeline/test_golden.py`` and says why in its commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from steptp_cli.main import main

GOLDEN = Path(__file__).parent / "golden"
WORKLOADS = ["level1/softmax", "level2/gemm_bias_relu"]
GENERATE = ["--depth", "2", "--seed", "3", "--breadth-cap", "2", "--max-steps-per-state", "10",
            "--no-verify", "--no-progress"]


def _compare(produced: Path, name: str) -> None:
    golden = GOLDEN / name
    if os.environ.get("STEPTP_WRITE_GOLDEN") == "1":
        golden.write_bytes(produced.read_bytes())
    assert produced.read_bytes() == golden.read_bytes(), f"{name} differs from its golden file"


def _verification(exactness: str) -> dict:
    """A fixed verification block (the golden test checks the pipeline's files, not TVM)."""
    equal = exactness == "E"
    return {"required": "equal_pass" if equal else "pass", "accepted": True, "outcome": "pass",
            "equal_pass": equal, "max_abs_error": 0.0, "max_rel_error": 0.0, "tolerances": {},
            "seconds": 1.0, "versions": {"tvm": "golden"}, "unhonoured_loops": [],
            "result": {"outcome": "pass"}}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("golden") / "steps.jsonl"
    assert main(["generate", *WORKLOADS, *GENERATE, "-o", str(out)]) == 0
    return out


def test_a_seeded_generation_writes_the_golden_records(generated):
    assert sum(1 for _ in generated.open()) > 50
    _compare(generated, "steps.jsonl")


def test_filtering_and_rendering_write_the_golden_rows(generated, tmp_path):
    # Every record marked verified, so the filter and the renderers have rows to write without a build.
    verified = tmp_path / "verified.jsonl"
    with generated.open() as src, verified.open("w") as dst:
        for line in src:
            record = json.loads(line)
            record["status"] = "verified"
            record["verification"] = _verification(record["exactness"])
            dst.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")
    kept = tmp_path / "kept.jsonl"
    assert main(["filter", str(verified), "--seed", "3", "-o", str(kept)]) == 0
    assert kept.stat().st_size > 0
    _compare(kept, "kept.jsonl")
    for fmt, name in (("messages", "messages.jsonl"), ("prompt-completion", "prompt_completion.jsonl")):
        rows = tmp_path / name
        assert main(["render", str(verified), "--format", fmt, "--seed", "3", "-o", str(rows)]) == 0
        _compare(rows, name)
    multi = tmp_path / "multi.jsonl"
    assert main(["render", str(verified), "--format", "messages", "--multi-answer", "3", "--seed", "3",
                 "-o", str(multi)]) == 0
    _compare(multi, "messages_multi3.jsonl")
